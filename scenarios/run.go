package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
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

// RunOptions override a scenario's defaults for one run.
type RunOptions struct {
	Seed    uint64
	Time    time.Duration // 0: the scenario's
	Clients int           // 0: the scenario's
	Lock    string        // "": the scenario's
	// Mix, when not nil, replaces the scenario's mixed locks (mix.go).
	Mix      []LockMix
	Workload string // "": the scenario's
	// Expect replaces the scenario's expectation ("": the scenario's), for
	// a lock whose verdict there the caller states (dbtest).
	Expect Expectation
	// Nemesis replaces the scenario's schedule with its own defaults;
	// Faults are what the random schedule draws from.
	Nemesis string
	Faults  []string
	Store   string // root of the run store
	// MinReplicasToWrite and MinReplicasMaxLag, when set, replace the
	// scenario's replication settings (cluster.Replication).
	MinReplicasToWrite, MinReplicasMaxLag *int
	// TLS runs the scenario's topology with TLS (cluster.Spec.TLS) even
	// when the scenario does not ask for it.
	TLS bool
	// Server names the server the cluster runs (cluster.Servers, --server);
	// "": the scenario's image, or cluster.Image().
	Server string
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
	// Invocation is how the command line asked for the run, for its
	// re-run line (Results.Rerun); nil: a run no command line names (a
	// sweep's point, a shrink's trial, a test's), which re-runs from the
	// scenario.json it leaves.
	Invocation *Invocation

	// mixed are the mix's locks with their drivers (prepare).
	mixed []mixed
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
	if inv == nil {
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
	o, err := s.withDriver(o)
	if err != nil {
		return s, o, err
	}
	mix := s.Mix
	if o.Mix != nil {
		mix = o.Mix
	}
	if o.mixed, err = o.mixDrivers(mix); err != nil {
		return s, o, err
	}
	s, err = s.apply(o)
	return s, o, err
}

func (s Scenario) apply(o RunOptions) (Scenario, error) {
	if o.Time != 0 {
		s.Time = o.Time
	}
	if o.Clients != 0 {
		s.Clients = o.Clients
	}
	if o.Lock != "" && o.Lock != s.Lock {
		// The expectation belongs to the failure and the lock together.
		s.Lock, s.Expect = o.Lock, Expected(s.Name, o.Lock)
	}
	if o.Workload != "" {
		s.Workload = o.Workload
	} else if s.WorkloadName() == "counter" && o.catalogue().Fencing(s.Lock) {
		s.Workload = "fenced" // a driver's lock that declares fencing, as Cell does for deadbolt's own
	}
	if o.Mix != nil && !slices.Equal(o.Mix, s.Mix) {
		// Another fleet is another experiment: nobody has judged it.
		s.Mix, s.Expect = o.Mix, Unknown
	}
	switch o.Expect {
	case "":
	case Safe, Unsafe:
		s.Expect = o.Expect
	default:
		return s, fmt.Errorf("unknown expectation %q (known: %s, %s)", o.Expect, Safe, Unsafe)
	}
	switch {
	case o.Nemesis != "":
		s.Nemesis, s.Fault = o.Nemesis, nemesis.Params{Faults: o.Faults}
	case len(o.Faults) > 0:
		return s, fmt.Errorf("--faults chooses what --nemesis random draws from; give --nemesis random too")
	}
	if o.MinReplicasToWrite != nil {
		s.Cluster.MinReplicasToWrite = *o.MinReplicasToWrite
	}
	if o.MinReplicasMaxLag != nil {
		s.Cluster.MinReplicasMaxLag = *o.MinReplicasMaxLag
	}
	s.Cluster.TLS = s.Cluster.TLS || o.TLS
	if o.Server != "" {
		img, err := cluster.ServerImage(o.Server)
		if err != nil {
			return s, err
		}
		s.Cluster.Image = img
	}
	need, err := nemesis.NeedsOf(s.Nemesis, s.Fault)
	if err != nil {
		return s, err
	}
	if !need.Allows(s.Cluster.Topology) {
		return s, fmt.Errorf("nemesis %s needs %s; scenario %s runs %s", s.Nemesis, need.TopologyWords(), s.Name, s.Cluster.Topology)
	}
	s.Cluster.ClockFaults = s.Cluster.ClockFaults || need.ClockFaults
	s.Cluster.LinkFaults = s.Cluster.LinkFaults || need.LinkFaults
	if err := s.Cluster.Validate(); err != nil {
		return s, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if s.Clients < 1 {
		return s, fmt.Errorf("--clients must be at least 1, got %d", s.Clients)
	}
	kind, err := workloads.Get(s.WorkloadName())
	if err != nil {
		return s, err
	}
	groups := 1
	if s.Cluster.Topology == cluster.Independent {
		groups = s.Cluster.Defaults().Masters
	}
	if o.Target != nil {
		if s, err = s.fitTarget(*o.Target, need, kind); err != nil {
			return s, err
		}
		groups = o.Target.Groups()
	}
	if err := s.fitsLock(o.catalogue(), s.Lock, kind, groups); err != nil {
		return s, err
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
	if err := s.checkMix(o, kind, groups); err != nil {
		return s, err
	}
	if kind.NeedsKeys && len(s.Keys) == 0 {
		return s, fmt.Errorf("scenario %s runs workload %s without lock keys", s.Name, kind.Name)
	}
	n, err := nemesis.New(s.Nemesis, s.Fault)
	if err != nil {
		return s, err
	}
	if s.Fault.Key != "" && kind.NeedsKeys && !slices.Contains(s.Keys, s.Fault.Key) {
		return s, fmt.Errorf("scenario %s faults the holder of %q, which no client locks (keys: %v)", s.Name, s.Fault.Key, s.Keys)
	}
	if s.Fault.On == history.Read && !kind.Resource {
		return s, fmt.Errorf("scenario %s waits for a resource read, and workload %s reads none", s.Name, kind.Name)
	}
	if s.Fault.Client >= s.Clients {
		return s, fmt.Errorf("scenario %s faults client %d of %d", s.Name, s.Fault.Client, s.Clients)
	}
	if need := n.Span(s.TTL) + 2*time.Second; s.Time < need {
		return s, fmt.Errorf("scenario %s needs --time of at least %s (nemesis schedule %s plus 2s), got %s", s.Name, need, n.Span(s.TTL), s.Time)
	}
	return s, nil
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

// Run executes the scenario: start the cluster, drive the client processes
// while the nemesis injects its faults, heal, check the history and write
// the run's directory. The cluster and every client are removed on every
// path.
func (s Scenario) Run(ctx context.Context, o RunOptions) (res *reports.Results, err error) {
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	s, o, err = s.prepare(o)
	if err != nil {
		return nil, err
	}
	kind, _ := workloads.Get(s.WorkloadName())
	var own client.Command // found only when a client runs it
	if o.Driver.Path == "" || o.mixesOwn() {
		if own, err = DefaultDriver(); err != nil {
			return nil, err
		}
	}
	driver := o.Driver
	if driver.Path == "" {
		driver = own
	}
	started := time.Now()
	spec := s.clusterSpec(kind)
	var cl *cluster.Cluster
	var origin cluster.Origin
	if o.Target != nil {
		logf("%s: running against the %s deployment of --target (seed %d): no container starts", s.Name, s.Cluster.Topology, o.Seed)
		cl, err = attachTarget(ctx, *o.Target, spec.LinkFaults, s.Keys)
		o.Pool = nil
	} else {
		logf("%s: starting %s topology (seed %d)", s.Name, s.Cluster.Topology, o.Seed)
		cl, origin, err = o.Pool.Get(ctx, spec)
	}
	if origin.Fallback != "" {
		logf("%s: a kept cluster could not be reset, started a fresh one: %s", s.Name, origin.Fallback)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
		return nil, err
	}
	// The cluster is kept for a later run only when this one ended healthy
	// and whole.
	health := ""
	defer func() {
		keep := err == nil && health == "ok" && ctx.Err() == nil
		if cerr := o.Pool.Put(context.WithoutCancel(ctx), cl, keep); cerr != nil {
			err = errors.Join(err, fmt.Errorf("remove cluster %s: %w", cl.Run, cerr))
		}
	}()
	// The run directory comes once there is something to record in it.
	dir, err := newRunDir(o.Store, s.Name)
	if err != nil {
		return nil, err
	}
	server := serverOf(ctx, cl, spec, o.Target != nil, logf, s.Name)
	reentrant := o.catalogue().Reentrant(s.Lock)
	rs := s.spec(o.Seed, driver, kind, reentrant)
	rs.Target = redacted(o.Target)
	if err := writeSpec(dir, rs); err != nil {
		return nil, err
	}
	hf, err := os.Create(filepath.Join(dir, HistoryFile))
	if err != nil {
		return nil, err
	}
	defer hf.Close()
	rec := history.NewRecorder(hf)
	stopWatch := cl.WatchFailovers(ctx, sentinelRecorder(rec))
	defer stopWatch()
	runner, err := workloads.NewRunner(kind.Name, workloads.Config{
		Clients: s.Clients, Keys: s.Keys, TTL: s.TTL,
		HoldMin: s.HoldMin, HoldMax: s.HoldMax, Pause: s.Pause, Seed: o.Seed,
		Lock: s.Lock, LockOptions: s.LockOptions, Endpoints: cl.Endpoints(), SlotEndpoints: cl.EndpointsFor, Driver: driver,
		Mix: o.workloadMix(own), LogDir: filepath.Join(dir, "clients"), Rec: rec, Reenter: s.Reenter, Inspect: cl.ReadKey,
	})
	if err != nil {
		return nil, err
	}
	nem, _ := nemesis.New(s.Nemesis, s.Fault)
	// Every client's driver is tried on the healthy cluster before the
	// run: one that cannot take a lock here stops it, with its own words.
	if err := runner.Probe(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
		return nil, err
	}
	if len(s.Mix) > 0 {
		logf("%s: mixed in: %s (the last client slots)", s.Name, mixText(s.Mix))
	}
	logf("%s: %s on %s (%s workload) for %s, nemesis %s, run dir %s", s.Name, checker.Plural(s.Clients, "client process"), s.Lock, kind.Name, s.Time, s.Nemesis, dir)

	rng := rand.New(rand.NewPCG(o.Seed, 0x6e656d65))
	// The fault phase starts when the nemesis lets the clients begin: once
	// the faults that must be in effect from the first acquire struck.
	var began time.Time
	var beginOnce sync.Once
	begin := func() {
		beginOnce.Do(func() {
			began = time.Now()
			rec.Mark(history.PhaseFaults)
			runner.Begin()
		})
	}
	env := nemesis.Env{Cluster: cl, Clients: runner, Rec: rec, Rng: rng, TTL: s.TTL, Halt: ctx, Begin: begin}
	if s.Nemesis != "none" {
		nemesis.CheckBefore(env, s.Nemesis) // before the workload, so it cannot race what the schedule waits for
	}
	runner.HoldStart() // until begin
	nemesis.Stage(nem, env)
	// The phases: faults for s.Time (a step that has not struck by then
	// never will), the heal of whatever is still broken, convergence, then
	// the workload runs on to settle. The nemesis returns once the cluster
	// agrees again (or its health check gave up), so the workload runs
	// through the heal and the damage that lands at convergence.
	nctx, ncancel := context.WithCancel(ctx)
	defer ncancel()
	faultPhase := time.AfterFunc(s.Time, ncancel)
	defer faultPhase.Stop()
	stop, quit := make(chan struct{}), make(chan struct{})
	defer close(quit)
	nemErr := make(chan error, 1)
	workload := time.Now()
	go func() {
		nemErr <- nem.Run(nctx, env)
		begin() // a schedule that had nothing to stage
		wait := time.Until(began.Add(s.Time))
		if s.Nemesis != "none" {
			// Healed and converged (or the check gave up): settle.
			rec.Mark(history.PhaseSettle)
			wait = max(wait, s.settle())
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-quit:
			return
		}
		if more := runOnFor(rec, s.minAcquires(), s.runOn(), quit); more >= 100*time.Millisecond {
			logf("%s: too few grants to judge by the end of the settle: ran on %.1fs for more (bound %s)", s.Name, more.Seconds(), s.runOn())
		}
		select {
		case <-quit:
		default:
			rec.Mark(history.PhaseEnd)
			close(stop)
		}
	}()
	watched := o.watch(Live{Scenario: s.Name, Started: workload, Time: s.Time, Settle: s.settle(), Rec: rec})
	werr := runner.Run(ctx, stop)
	watched()
	ncancel() // a workload that failed ends the fault phase too
	nerr := <-nemErr
	if ctx.Err() != nil {
		return nil, ErrInterrupted
	}
	if werr != nil {
		return nil, werr
	}
	if nerr != nil {
		logf("%s: nemesis: %v", s.Name, nerr)
	}
	// Every run ends healed and checked, so a broken cluster is never
	// mistaken for a result.
	logf("%s: workload done; healing every fault and checking the cluster's health", s.Name)
	healCtx, cancel := context.WithTimeout(ctx, s.Cluster.HealthTimeout()+30*time.Second)
	defer cancel()
	workloadS := time.Since(workload).Seconds()
	health = "ok"
	if err := errors.Join(cl.HealAll(healCtx), cl.WaitHealthy(healCtx, s.Cluster.HealthTimeout())); err != nil {
		health = err.Error()
	}
	if ctx.Err() != nil {
		// Interrupted while healing: the health check did not fail, it was
		// cut short, and the run gives no verdict.
		return nil, ErrInterrupted
	}
	if err := cl.SaveLogs(context.WithoutCancel(ctx), dir); err != nil {
		logf("%s: saving node logs: %v", s.Name, err)
	}
	stopWatch()
	if err := rec.Err(); err != nil {
		return nil, err
	}
	ops := rec.Ops()
	refused, aerr := aclRefusals(healCtx, cl, ops)
	if aerr != nil {
		logf("%s: %v", s.Name, aerr)
	}
	logf("%s: checking %s", s.Name, checker.Plural(len(ops), "operation"))
	report := checker.Check(ops, checker.Options{Checkers: kind.Checkers, MinAcquires: s.minAcquires(),
		Reentrant: reentrant})
	if ctx.Err() != nil {
		return nil, ErrInterrupted
	}
	switch {
	case nerr != nil:
		report.Void(fmt.Sprintf("the nemesis failed (%v), so the run did not test what it set out to: its verdict is unknown.", nerr))
	case s.Nemesis != "none" && len(report.FaultWindows) == 0:
		report.Void(fmt.Sprintf("the nemesis %s never injected its fault, so the run did not test what it set out to: its verdict is unknown.", s.Nemesis))
	}
	if s.Queue && !stoodInLine(report) && report.Stats.AcquiresOK > 0 {
		report.Void("no acquire stood in the lock's line, so the run did not test the queue's order as it set out to: its verdict is unknown.")
	}
	if s.Fence && !metFence(report) && report.Stats.AcquiresOK > 0 {
		report.Void("no holder touched the resource after a newer lease had been granted, so no token was ever checked against a newer one and the run did not test the fence as it set out to: its verdict is unknown.")
	}
	if s.Reenter && report.Stats.Reentries == 0 && report.Stats.AcquiresOK > 0 {
		report.Void("no client re-entered a key it held, so the run did not test re-entry as it set out to: its verdict is unknown.")
	}
	if refused != "" {
		report.Void(fmt.Sprintf("deadbolt's ACL refused the lock's own commands (%s), so the run tested the harness's rules, not the lock: its verdict is unknown.", refused))
	}
	if health != "ok" {
		report.Void(fmt.Sprintf("the cluster was not healthy after the run (%s), so the run did not end as it set out to: its verdict is unknown.", health))
	}
	res = &reports.Results{
		Scenario: s.Name, Description: s.Description, Precondition: s.Precondition, Seed: o.Seed,
		Lock: s.Lock, Mix: mixText(s.Mix), MixedProcesses: runner.Mixed(), Reentrant: reentrant, Driver: o.Driver.String(), Topology: s.Cluster.Topology, Workload: kind.Name, Nemesis: s.Nemesis,
		Expected: string(s.Expect), Clients: s.Clients, TimeS: s.Time.Seconds(),
		Ops: len(ops), DurationS: time.Since(started).Seconds(), Health: health,
		Dir: dir, ClusterReused: origin.Reused, ClusterFallback: origin.Fallback,
		SetupS: origin.Setup.Seconds(), WorkloadS: workloadS,
		Server: server, Rerun: o.rerun(s.Name, dir, server),
	}
	res.SetCheck(report, s.Expect.Matches(string(report.Verdict)))
	if err := reports.WriteRun(dir, res, report); err != nil {
		return res, err
	}
	if err := errors.Join(linkLatest(o.Store, dir), writeIndex(o.Store)); err != nil {
		return res, err
	}
	if ctx.Err() != nil {
		// Interrupted while the reports were written: they may be whole,
		// but the run was not let finish, so it gives no verdict.
		return nil, ErrInterrupted
	}
	return res, nil
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
