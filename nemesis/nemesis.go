// Package nemesis injects faults into a running cluster on a schedule and
// records each one in the history as a window, from fault-start to
// fault-end. Every schedule heals what it broke before it returns, even
// when the run is interrupted.
package nemesis

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/internal/suggest"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// Env is what a schedule acts on.
type Env struct {
	// Cluster is the lock service's nodes (a *cluster.Cluster in a run).
	Cluster Cluster
	// Clients are the workload's client processes, for faults on clients
	// (a *workloads.Runner in a run).
	Clients Clients
	Rec     *history.Recorder
	Rng     *rand.Rand
	// TTL is the workload's lease time, for schedules that must outwait it.
	TTL time.Duration
	// Halt ends only when the run is interrupted (nil: never). Health
	// checks give up on it; heals never do.
	Halt context.Context
	// HealthTimeout is how long a health check around a fault waits for
	// the cluster (0: as long as the final check after the run,
	// cluster.Spec.HealthTimeout).
	HealthTimeout time.Duration
	// Begin, when set, lets the workload start (and marks the start of
	// the fault phase); a schedule calls it once the faults that must be
	// in effect from the first acquire have struck. Unset, begin lets
	// Clients start.
	Begin func()
}

// Clients is what a schedule needs of the workload's clients: gates that
// hold acquires back, moments and requests to catch, and the processes
// behind the client slots. *workloads.Runner is the real one.
type Clients interface {
	// Slots is how many client slots the run has; WaitClient is slot n's
	// current history process and OS process, once it has one.
	Slots() int
	WaitClient(ctx context.Context, n int) (int, *client.Process, error)
	// HoldStart holds every acquire back until Begin; Reserve closes key
	// to all, Admit opens it to slot alone, Open to all again.
	HoldStart()
	Begin()
	Reserve(key string)
	Admit(key string, slot int)
	Open(key string)
	// Catch waits for a moment of the workload and holds its client
	// there; CatchSend does so for a request on its way out.
	Catch(ctx context.Context, m workloads.Moment) (*workloads.Caught, error)
	CatchSend(ctx context.Context, a workloads.Aim) (*workloads.Sending, error)
	// WatchStops reports the clients that stopped at an armed point.
	WatchStops() (<-chan workloads.Stop, func())
	// Quiet waits until proc has no request in flight.
	Quiet(ctx context.Context, proc *client.Process) error
}

var _ Clients = (*workloads.Runner)(nil)

// Cluster is what a schedule needs of the cluster: its nodes by name and
// role and as Sentinel or Redis Cluster sees them now, the links from
// clients to nodes, and its health. *cluster.Cluster is the real one.
type Cluster interface {
	// Setup is the Spec the cluster runs.
	Setup() cluster.Spec
	Node(name string) (*cluster.Node, error)
	ByRole(r cluster.Role) []*cluster.Node
	// Master and Replicas are the nodes in those roles now; GroupName is
	// Sentinel's name for them.
	Master(ctx context.Context) (*cluster.Node, error)
	Replicas(ctx context.Context) ([]*cluster.Node, error)
	GroupName() string
	// Link is the proxy between client slot client and node.
	Link(client int, node string) (*cluster.Link, error)
	// Masters, PrimarySlot and MigrateSlot are for a Redis Cluster.
	Masters(ctx context.Context) ([]*cluster.Node, error)
	PrimarySlot() (int, error)
	MigrateSlot(ctx context.Context, slot int, src, dst *cluster.Node, pause time.Duration) error
	// WaitHealthy waits until every node answers and agrees on the master.
	WaitHealthy(ctx context.Context, timeout time.Duration) error
}

var _ Cluster = (*cluster.Cluster)(nil)

// begin lets the workload start: see Env.Begin.
func (env Env) begin() {
	switch {
	case env.Begin != nil:
		env.Begin()
	case env.Clients != nil:
		env.Clients.Begin()
	}
}

// Params tune a schedule; zero fields take its defaults. Faults on clients
// pick their victim by Key (the client that holds Key, the moment it does)
// or else by Client (the slot's current process).
type Params struct {
	// After is how long the schedule waits before it starts.
	After time.Duration `json:"after,omitempty"`
	// For is how long a fault lasts (a pause: by default twice the TTL, so
	// the lease surely runs out while its holder sleeps).
	For time.Duration `json:"for,omitempty"`
	// Key targets the holder of this lock key.
	Key string `json:"key,omitempty"`
	// On is the workload event that shows the victim holds Key: an ok
	// acquire (the default) or an ok read of the resource under the lease
	// (inside the critical section, before the write).
	On history.F `json:"on,omitempty"`
	// Client targets client slot n when Key is empty; with Key, n > 0
	// targets that slot's hold of Key (0: any client's).
	Client int `json:"client,omitempty"`
	// Point stops the victim at this named point inside the lock.
	Point string `json:"point,omitempty"`
	// Handoff ends a pause at the next grant of Key, not after its length
	// alone (Step.Handoff).
	Handoff bool `json:"handoff,omitempty"`
	// Steps are the faults of a plan.
	Steps []Step `json:"steps,omitempty"`
	// Strikes bounds how many requests a fault inside an operation
	// strikes (0: DefaultStrikes).
	Strikes int `json:"strikes,omitempty"`
	// Faults are what the random schedule draws from; Every is its mean
	// gap between faults.
	Faults []string      `json:"faults,omitempty"`
	Every  time.Duration `json:"every,omitempty"`
}

// Validate rejects parameters no schedule can use.
func (p Params) Validate() error {
	switch {
	case p.Strikes < 0:
		return fmt.Errorf("nemesis strikes must not be negative, got %d", p.Strikes)
	case p.After < 0 || p.For < 0 || p.Every < 0:
		return fmt.Errorf("nemesis durations must not be negative (after %s, for %s, every %s)", p.After, p.For, p.Every)
	case p.Client < 0:
		return fmt.Errorf("no client %d", p.Client)
	}
	// Steps are the plan's to check (Plan.validate), presets' included.
	return checkHolderEvent(p.On)
}

// checkHolderEvent rejects an event that cannot show a client holds a key.
func checkHolderEvent(on history.F) error {
	if on != "" && on != history.Acquire && on != history.Read {
		return fmt.Errorf("a fault can wait for an ok %s or %s, not %q", history.Acquire, history.Read, on)
	}
	return nil
}

// Nemesis is one fault schedule.
type Nemesis interface {
	// Run waits for its start, injects the fault, waits, heals. An early
	// end of ctx cuts the waits short but never skips the heal.
	Run(ctx context.Context, env Env) error
	// Span is how long the schedule takes when not cut short.
	Span(ttl time.Duration) time.Duration
}

// Stage lets a schedule set the workload's gates before the workload
// starts (see Plan): call it after the runner is built and before it runs.
func Stage(n Nemesis, env Env) {
	if s, ok := n.(interface{ stage(Env) }); ok {
		s.stage(env)
	}
}

type entry struct {
	summary  string
	topology string
	make     func(Params) Nemesis
}

var registry = map[string]entry{}

func register(name, topology, summary string, f func(Params) Nemesis) {
	if _, dup := registry[name]; dup {
		panic("nemesis: duplicate " + name)
	}
	registry[name] = entry{summary: summary, topology: topology, make: f}
}

// New returns the named schedule tuned by p.
func New(name string, p Params) (Nemesis, error) {
	e, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown nemesis %q (known: %s)%s", name, strings.Join(Names(), ", "), suggest.Hint(name, Names()))
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	n := e.make(p)
	if v, ok := n.(interface{ validate() error }); ok {
		if err := v.validate(); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// Summary is the one-line description of a schedule.
func Summary(name string) string { return registry[name].summary }

// Names lists the schedules, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(registry))
}

// window records one fault: fault-start around inject, fault-end around heal.
// The recorder names the instance (id) when it records its fault-start.
// A fault aimed at a grant carries the grant's key and lease on its
// fault-start, so that the checker can tell whether the lease was held
// when the fault struck.
type window struct {
	rec   *history.Recorder
	fault string
	node  string
	id    string

	key, lease string
	// healKey and healLease name the grant a fault's heal was aimed at
	// (Step.Handoff), on its fault-end.
	healKey, healLease string
	// beforeHeal, when set, is called as the heal begins: a grant awaited
	// under the fault no longer can be (Step.Under).
	beforeHeal func()
	// master is the master when a step that waits for its failover
	// struck (Step.Failover).
	master *cluster.Node
	// target is the concrete selector struck, recorded on the fault-start.
	target string
	// aim, for a fault struck inside a client's operation, says which and
	// how it landed on the window's ops (history.InOp).
	aim *aimed
}

func (w *window) step(f history.F, act func(context.Context) error) error {
	inv := history.Op{Type: history.Invoke, Process: history.NemesisProcess, F: f, Fault: w.fault, FaultID: w.id, Node: w.node}
	switch f {
	case history.FaultStart:
		inv.Key, inv.Lease, inv.Target = w.key, w.lease, w.target
	case history.FaultEnd:
		inv.Key, inv.Lease = w.healKey, w.healLease
	}
	if w.aim != nil {
		inv.InOp = w.aim.record(inv)
	}
	inv = w.rec.Record(inv)
	w.id = inv.FaultID
	// Faults and heals must finish even when the run is being interrupted.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := act(ctx)
	done := history.Op{Type: history.OK, Process: history.NemesisProcess, F: f, Fault: w.fault, FaultID: w.id, Node: w.node, Key: inv.Key, Lease: inv.Lease, Target: inv.Target}
	if err != nil {
		done.Type, done.Error = history.Info, err.Error()
	}
	if w.aim != nil {
		done.InOp = w.aim.record(done)
	}
	w.rec.Record(done)
	if err != nil {
		return fmt.Errorf("%s %s on %s: %w", f, w.fault, w.node, err)
	}
	return nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// or is d, or def when d is zero.
func or(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
