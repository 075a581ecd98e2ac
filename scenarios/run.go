package scenarios

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/locks"
	_ "github.com/deadbolt-lab/deadbolt/locks/all" // every lock selectable by name
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// MinAcquires is how many acquires must succeed for a run to count: an
// idle run proves nothing.
const MinAcquires = 10

// RunOptions are one run's: its seed, the changes it makes to the
// scenario (Overrides), and where and how it runs.
type RunOptions struct {
	// Context ends what preparing the run does before anything starts
	// (building a library's driver): a Ctrl-C of the command line's. nil:
	// it runs to its end.
	Context context.Context
	Seed    uint64
	// Overrides change the scenario for this run, in order (override.go).
	Overrides []Override
	Store     string // root of the run store
	// Driver starts each client process; empty: this binary's `client`.
	Driver client.Command
	// Locks is what the driver's hello declared (client.Probe); nil: the
	// Go locks' registry, whose locks `deadbolt client` runs.
	Locks locks.Catalogue
	// Log receives progress lines; nil discards them.
	Log func(format string, args ...any)
	// Progress, when set, is told of the workload as it starts and calls
	// the returned func when it ends (see Live).
	Progress func(Live) (done func())
	// Target, when set, is an existing deployment to run against: no
	// container starts, and node faults are refused (target.go).
	Target *endpoints.Endpoints
	// Pool, when set, lends the run a cluster another run of its spec
	// used, reset, and takes it back (cluster.Pool); nil starts a fresh one.
	Pool *cluster.Pool
	// RowKnobs are the knobs a matrix or an audit gives the rows whose lock
	// takes knobs (a library's), by whom they are for: AllLibraries (every
	// such row, --lock-option), a library (its every version), or a
	// library at a version; the more particular wins a knob given twice.
	// deadbolt's own locks take none, and run without them.
	RowKnobs map[string]map[string]string
	// Invocation is how the command line asked for the run, for its
	// re-run line (Results.Rerun); nil: a run no command line names (a
	// sweep's point, a shrink's trial, a test's), which re-runs from the
	// scenario.json it leaves.
	Invocation *Invocation

	// mixed are the mix's locks with their drivers (prepare).
	mixed []mixed
}

// AllLibraries keys the knobs RunOptions.RowKnobs gives every library row.
const AllLibraries = "*"

// knobsFor are the knobs RowKnobs gives lock's row: every library's, its
// library's, its version's, each over the one before; nil for none.
func (o RunOptions) knobsFor(lock string) map[string]string {
	var out map[string]string
	for _, key := range []string{AllLibraries, libraryOf(lock), lock} {
		if ks, ok := o.RowKnobs[key]; ok {
			if out == nil {
				out = map[string]string{}
			}
			maps.Copy(out, ks)
		}
	}
	return out
}

// Invocation is what a single `deadbolt run` needs besides the seed to
// run a run again.
type Invocation struct {
	// File is the scenario file the run read (`run --file`); "": the run
	// named its scenario.
	File string
	// Flags are the options given, each flag followed by its value, as
	// `deadbolt run` takes them: not --seed (each run has its own), nor
	// where the run wrote (--store) or how a suite spread its runs.
	Flags []string
}

// rerun is the arguments of the `deadbolt run` that runs again the run of
// scenario name with seed, which wrote its description into dir and ran
// on server: its scenario by name (or its file), the seed, the options
// given, and --server when the cluster ran a server of its own that no
// option named (a matrix's servers axis, DEADBOLT_REDIS_IMAGE; a --target
// has no server name). A run no
// command line names re-runs from its scenario.json.
func (o RunOptions) rerun(name, dir string, server reports.Server) []string {
	seed := []string{"--seed", strconv.FormatUint(o.Seed, 10)}
	inv := o.Invocation
	if _, err := Get(name); inv == nil || (inv.File == "" && err != nil) {
		// No command line named it, or its name is no registered scenario
		// (a cell the generator drew): its scenario.json replays it.
		return append([]string{"run", "--file", filepath.Join(dir, SpecFile)}, seed...)
	}
	args := []string{"run", name}
	if inv.File != "" {
		args = []string{"run", "--file", inv.File}
	}
	args = append(append(args, seed...), inv.Flags...)
	if inv.File == "" && !slices.Contains(inv.Flags, "--server") && server.Flag() != "" {
		args = append(args, "--server", server.Name)
	}
	return args
}

// ctx is Context, or one that never ends.
func (o RunOptions) ctx() context.Context {
	if o.Context == nil {
		return context.Background()
	}
	return o.Context
}

func (o RunOptions) catalogue() locks.Catalogue {
	if o.Locks == nil {
		return locks.Registry
	}
	return o.Locks
}

// ErrInterrupted is returned when ctx ended before the run finished; the
// cluster and the clients are removed and no verdict is given.
var ErrInterrupted = errors.New("run interrupted")

// Prepare applies the options and rejects combinations that cannot work,
// before any container or process starts. A scenario with its own driver
// asks it for its hello.
func (s Scenario) Prepare(o RunOptions) (Scenario, error) {
	s, _, err := s.prepare(o)
	return s, err
}

// prepare is Prepare, and the options with the scenario's driver.
func (s Scenario) prepare(o RunOptions) (Scenario, RunOptions, error) {
	over, err := s.overridden(o)
	if err != nil {
		return s, o, err
	}
	if o, err = over.withDriver(o); err != nil {
		return s, o, err
	}
	if o.mixed, err = o.mixDrivers(over.Mix); err != nil {
		return s, o, err
	}
	s, err = s.apply(o)
	return s, o, err
}

// apply makes the scenario the run o asks for, and refuses it if it cannot
// run: its overrides, then the cluster, the locks and the nemesis each
// fitted to the rest.
func (s Scenario) apply(o RunOptions) (Scenario, error) {
	s, err := s.withOverrides(o)
	if err != nil {
		return s, err
	}
	need, err := s.fitCluster()
	if err != nil {
		return s, err
	}
	kind, err := workloads.Get(s.WorkloadName())
	if err != nil {
		return s, err
	}
	if s, err = s.fitLocks(o, need, kind); err != nil {
		return s, err
	}
	return s, s.fitNemesis(kind)
}

// withOverrides is the scenario with o's overrides. A lock that declares
// fencing (a driver's, as Cell does for deadbolt's own) runs the fenced
// counter in place of the counter, unless the run names its workload:
// that is decided on the scenario's own workload, before the overrides.
func (s Scenario) withOverrides(o RunOptions) (Scenario, error) {
	over, err := s.overridden(o)
	if err != nil {
		return s, err
	}
	if kind, err := workloads.Get(s.WorkloadName()); err == nil && kind.FencedAs != "" && o.catalogue().Fencing(over.Lock) {
		s.Workload = kind.FencedAs
		return s.overridden(o)
	}
	return over, nil
}

// fitCluster gives the cluster what the nemesis needs of it (clock and
// link faults) and checks the topology and the cluster's settings.
func (s *Scenario) fitCluster() (nemesis.Needs, error) {
	need, err := nemesis.NeedsOf(s.Nemesis, s.Fault)
	if err != nil {
		return need, err
	}
	if !need.Allows(s.Cluster.Topology) {
		return need, fmt.Errorf("nemesis %s needs %s; scenario %s runs %s", s.Nemesis, need.TopologyWords(), s.Name, s.Cluster.Topology)
	}
	s.Cluster.ClockFaults = s.Cluster.ClockFaults || need.ClockFaults
	s.Cluster.LinkFaults = s.Cluster.LinkFaults || need.LinkFaults
	if err := s.Cluster.Validate(); err != nil {
		return need, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if s.Clients < 1 {
		return need, fmt.Errorf("--clients must be at least 1, got %d", s.Clients)
	}
	return need, nil
}

// fitLocks checks the scenario's lock and the mixed ones against the
// cluster (or --target's deployment) and the workload, and settles what
// the lock's place decides: a Redis Cluster's key to watch, the lock's
// way of following a Sentinel failover.
func (s Scenario) fitLocks(o RunOptions, need nemesis.Needs, kind workloads.Kind) (Scenario, error) {
	groups := 1
	if s.Cluster.Topology == cluster.Independent {
		groups = s.Cluster.Defaults().Masters
	}
	var err error
	if o.Target != nil {
		if s, err = s.fitTarget(*o.Target, need, kind); err != nil {
			return s, err
		}
		groups = o.Target.Groups()
	}
	if err := s.fitsLock(o.catalogue(), s.Lock, kind, groups); err != nil {
		return s, err
	}
	if _, err := client.ResolveLibrary(o.catalogue().Knobs(s.Lock), s.LockOptions); err != nil {
		return s, fmt.Errorf("lock %s cannot run in scenario %s: %w", s.Lock, s.Name, err)
	}
	if s.Cluster.Topology == cluster.RedisCluster && s.Cluster.PrimaryKey == "" && len(s.Keys) > 0 {
		s.Cluster.PrimaryKey = s.Keys[0]
	}
	if s.Cluster.Topology == cluster.Sentinel {
		mode, err := o.catalogue().SentinelMode(s.Lock, s.LockOptions.Sentinel)
		if err != nil {
			return s, fmt.Errorf("lock %s cannot run in scenario %s: %w", s.Lock, s.Name, err)
		}
		s.LockOptions.Sentinel = mode
	}
	return s, s.checkMix(o, kind, groups)
}

// fitNemesis checks that the workload makes what the nemesis aims at (the
// keys, the resource reads, the client slots) and that the fault phase
// is long enough for its schedule.
func (s Scenario) fitNemesis(kind workloads.Kind) error {
	if kind.NeedsKeys && len(s.Keys) == 0 {
		return fmt.Errorf("scenario %s runs workload %s without lock keys", s.Name, kind.Name)
	}
	if err := nemesis.CheckTakes(s.Nemesis, s.Fault); err != nil {
		return fmt.Errorf("scenario %s: fault.%w", s.Name, err)
	}
	n, err := nemesis.New(s.Nemesis, s.Fault)
	if err != nil {
		return err
	}
	if s.Fault.Key != "" && kind.NeedsKeys && !slices.Contains(s.Keys, s.Fault.Key) {
		return fmt.Errorf("scenario %s faults the holder of %q, which no client locks (keys: %v)", s.Name, s.Fault.Key, s.Keys)
	}
	if s.Fault.On == history.Read && !kind.Resource {
		return fmt.Errorf("scenario %s waits for a resource read, and workload %s reads none", s.Name, kind.Name)
	}
	if s.Fault.Client >= s.Clients {
		return fmt.Errorf("scenario %s faults client %d of %d", s.Name, s.Fault.Client, s.Clients)
	}
	if need := n.Span(s.TTL.D()) + 2*time.Second; s.Time.D() < need {
		return fmt.Errorf("scenario %s needs --time of at least %s (nemesis schedule %s plus 2s), got %s", s.Name, need, n.Span(s.TTL.D()), s.Time)
	}
	return nil
}

// fitsLock checks that lock, as catalogue c declares it, can run in the
// scenario being prepared: with its TLS, over its master groups, on its
// topology, making the workload's calls on a held lease, and stopping at
// the point a fault stops clients at. The scenario's own lock and every
// mixed one (mix.go) are held to it.
func (s Scenario) fitsLock(c locks.Catalogue, lock string, kind workloads.Kind, groups int) error {
	if s.Cluster.TLS {
		if err := c.TLS(lock); err != nil {
			return fmt.Errorf("lock %s cannot run in scenario %s with TLS: %w", lock, s.Name, err)
		}
	}
	if err := c.Fits(lock, groups); err != nil {
		return fmt.Errorf("lock %s cannot run in scenario %s (%s topology): %w", lock, s.Name, s.Cluster.Topology, err)
	}
	if err := c.RunsOn(lock, s.Cluster.Topology); err != nil {
		return fmt.Errorf("lock %s cannot run in scenario %s: %w", lock, s.Name, err)
	}
	// A run that judges re-entry or a queue's order proves nothing of a
	// lock without them: it is refused rather than run to unknown.
	if s.Reenter && !c.Reentrant(lock) {
		return fmt.Errorf("scenario %s re-enters held keys, and lock %s does not declare re-entry", s.Name, lock)
	}
	if s.Queue && !c.Queues(lock) {
		return fmt.Errorf("scenario %s judges a queue's order, and lock %s keeps no queue of waiters", s.Name, lock)
	}
	for _, call := range kind.Calls {
		if err := c.Offers(lock, call); err != nil {
			return fmt.Errorf("workload %s calls %s on a held lease: %w", kind.Name, call, err)
		}
	}
	if s.Fault.Point != "" {
		if err := c.HasPoint(lock, s.Fault.Point); err != nil {
			return fmt.Errorf("scenario %s stops clients at %q: %w", s.Name, s.Fault.Point, err)
		}
	}
	return nil
}

// DefaultDriver runs clients as deadbolt's own client, the
// deadbolt-client binary beside deadbolt (client.Own).
func DefaultDriver() (client.Command, error) { return client.Own() }

// clusterSpec is the cluster the prepared scenario runs on.
func (s Scenario) clusterSpec(kind workloads.Kind) cluster.Spec {
	spec := s.Cluster
	spec.Resource = kind.Resource
	return spec
}

// ClusterSpec is the cluster a run of the scenario with o starts, for a
// cluster.Pool to expect.
func (s Scenario) ClusterSpec(o RunOptions) (cluster.Spec, error) {
	s, _, err := s.prepare(o)
	if err != nil {
		return cluster.Spec{}, err
	}
	kind, err := workloads.Get(s.WorkloadName())
	if err != nil {
		return cluster.Spec{}, err
	}
	return s.clusterSpec(kind), nil
}

// Run executes the scenario in its stages (stages.go): start the cluster,
// record (the run's directory, its history, the clients), the phases
// (faults, heal, convergence, settle, while the clients run), heal and
// check the cluster's health, judge the history, and report. The cluster
// and every client are removed on every path.
func (s Scenario) Run(ctx context.Context, o RunOptions) (res *reports.Results, err error) {
	r, err := s.newRun(o)
	if err != nil {
		return nil, err
	}
	if err := r.startCluster(ctx); err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, r.release(ctx, err == nil)) }()
	closeRecord, err := r.record(ctx)
	defer closeRecord()
	if err != nil {
		return nil, err
	}
	nerr, err := r.phases(ctx)
	if err != nil {
		return nil, err
	}
	healCtx, cancel := context.WithTimeout(ctx, r.s.Cluster.HealthTimeout()+30*time.Second)
	defer cancel()
	ops, refused, err := r.heal(ctx, healCtx)
	if err != nil {
		return nil, err
	}
	report := r.judge(ops, nerr, refused)
	if ctx.Err() != nil {
		return nil, ErrInterrupted
	}
	return r.report(ctx, report, len(ops))
}

// sentinelRecorder records what the Sentinels announce: each master switch
// once (every Sentinel announces it; the first tells), each Sentinel's
// TILT mode entered and left.
func sentinelRecorder(rec *history.Recorder) func(cluster.SentinelEvent) {
	var mu sync.Mutex
	var last string
	return func(ev cluster.SentinelEvent) {
		op := history.Op{Process: history.NemesisProcess, Fault: ev.Sentinel}
		switch ev.Kind {
		case "+switch-master":
			op.F, op.Node = history.Failover, ev.From+" -> "+ev.To
			mu.Lock()
			defer mu.Unlock()
			if op.Node == last {
				return
			}
			last = op.Node
		case "+tilt":
			op.F, op.Node = history.Tilt, "entered"
		case "-tilt":
			op.F, op.Node = history.Tilt, "left"
		default:
			return
		}
		rec.Instant(op)
	}
}

// stoodInLine reports that the fairness check judged a queue: some
// acquire stood in the lock's line.
// metFence reports a stale access that reached the fence: the resource
// rejected it, or took it (a write before the newer holder touched the
// key, or one past the fence, which the checker flags).
func metFence(r checker.Report) bool {
	c, ok := r.Check("fencing")
	if !ok {
		return false
	}
	m := c.Metrics
	return m["stale_writes_rejected"]+m["stale_reads_rejected"]+m["stale_writes_accepted"]+m["superseded_writes_accepted"] > 0
}

func stoodInLine(r checker.Report) bool {
	c, ok := r.Check("fairness")
	return ok && c.Metrics["queued"] > 0
}

// serverOf is what ran the lock service: the server's name and image (none
// for a --target), and the version its first node reports in INFO server.
// A node that does not answer leaves the version out, with a log line: the
// run does not depend on it.
func serverOf(ctx context.Context, cl *cluster.Cluster, spec cluster.Spec, target bool, logf func(string, ...any), name string) reports.Server {
	var srv reports.Server
	if !target {
		srv.Image = spec.Defaults().Image
		srv.Name = cluster.ServerOf(srv.Image)
	}
	v, err := cl.ServerVersion(ctx)
	if err != nil {
		logf("%s: the server's version is not known: %v", name, err)
		return srv
	}
	srv.Product, srv.Version, srv.RedisVersion = v.Name, v.Version, v.RedisVersion
	return srv
}
