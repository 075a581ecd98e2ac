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
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/internal/suggest"
)

// Env is what a schedule acts on.
type Env struct {
	Cluster Cluster
	// Clients are the workload's client processes, for faults on clients.
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
	// Cluster.HealthTimeout).
	HealthTimeout time.Duration
	// Begin, when set, lets the workload start (and marks the start of
	// the fault phase); a schedule calls it once the faults that must be
	// in effect from the first acquire have struck. Unset, begin lets
	// Clients start.
	Begin func()
}

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
	// Until ends the fault of a schedule that aims at a client past its
	// length, as Step.Until does: UntilHandoff ends a pause at the next
	// grant of Key.
	Until Until `json:"until,omitempty"`
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
	// takes are the parameters (Params' JSON names) the schedule reads;
	// nil: every one (a schedule that did not say).
	takes []string
}

var registry = map[string]entry{}

func register(name, topology, summary string, f func(Params) Nemesis, takes []string) {
	if _, dup := registry[name]; dup {
		panic("nemesis: duplicate " + name)
	}
	for _, t := range takes {
		if !slices.Contains(paramNames(), t) {
			panic("nemesis: " + name + " takes " + t + ", which is no parameter")
		}
	}
	registry[name] = entry{summary: summary, topology: topology, make: f, takes: takes}
}

// paramNames are Params' fields by their JSON names.
func paramNames() []string {
	var out []string
	t := reflect.TypeFor[Params]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}

// Set names the parameters p sets (not zero), by their JSON names.
func (p Params) Set() []string {
	var out []string
	v := reflect.ValueOf(p)
	names := paramNames()
	for i := range v.NumField() {
		if !v.Field(i).IsZero() {
			out = append(out, names[i])
		}
	}
	return out
}

// CheckTakes refuses a parameter the named schedule does not read (a plan
// file's "every", which only random takes): set, it would be ignored
// without a word. A schedule that did not declare what it takes takes
// everything.
func CheckTakes(name string, p Params) error {
	e, ok := registry[name]
	if !ok || e.takes == nil {
		return nil
	}
	for _, f := range p.Set() {
		if !slices.Contains(e.takes, f) {
			takes := "nothing"
			if len(e.takes) > 0 {
				takes = strings.Join(e.takes, ", ")
			}
			return fmt.Errorf("%s: nemesis %s does not take it (it takes: %s)", f, name, takes)
		}
	}
	return nil
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
	// (UntilHandoff), on its fault-end.
	healKey, healLease string
	// beforeHeal, when set, is called as the heal begins: a grant awaited
	// under the fault no longer can be (Step.Under).
	beforeHeal func()
	// master is the master when a step that waits for its failover
	// struck (Step.Failover).
	master Node
	// target is the concrete selector struck, recorded on the fault-start.
	target string
	// by is the step's size, recorded on the fault-start.
	by time.Duration
	// aim, for a fault struck inside a client's operation, says which and
	// how it landed on the window's ops (history.InOp).
	aim *aimed
}

func (w *window) step(f history.F, act func(context.Context) error) error {
	inv := history.Op{Type: history.Invoke, Process: history.NemesisProcess, F: f, Fault: w.fault, FaultID: w.id, Node: w.node}
	switch f {
	case history.FaultStart:
		inv.Key, inv.Lease, inv.Target, inv.By = w.key, w.lease, w.target, int64(w.by)
		e := faults[w.fault].decl.Effects
		inv.Effects = &e
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
	done := history.Op{Type: history.OK, Process: history.NemesisProcess, F: f, Fault: w.fault, FaultID: w.id, Node: w.node, Key: inv.Key, Lease: inv.Lease, Target: inv.Target, By: inv.By}
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
