package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// run is one run of a prepared scenario, as its stages hand it on:
// startCluster, record, phases, heal, judge, report (Run).
type run struct {
	s         Scenario
	o         RunOptions
	logf      func(format string, args ...any)
	kind      workloads.Kind
	own       client.Command // deadbolt's own client, for mixed locks
	driver    client.Command // what runs each client
	reentrant bool
	started   time.Time

	// startCluster
	cl     *cluster.Cluster
	on     deployment // cl's, unless a test runs the phases on a fake
	origin cluster.Origin
	server reports.Server
	// record
	dir       string
	rec       *history.Recorder
	stopWatch func()
	runner    *workloads.Runner
	nem       nemesis.Nemesis
	// phases
	workloadStart time.Time
	workloadS     float64
	// heal: "ok", or what is wrong with the cluster after the run
	health string
}

// newRun prepares the scenario with o, before any container starts.
func (s Scenario) newRun(o RunOptions) (*run, error) {
	r := &run{logf: o.Log, started: time.Now()}
	if r.logf == nil {
		r.logf = func(string, ...any) {}
	}
	var err error
	if r.s, r.o, err = s.prepare(o); err != nil {
		return nil, err
	}
	r.kind, _ = workloads.Get(r.s.WorkloadName())
	if r.o.Driver.Path == "" || r.o.mixesOwn() { // found only when a client runs it
		if r.own, err = DefaultDriver(); err != nil {
			return nil, err
		}
	}
	r.driver = r.o.Driver
	if r.driver.Path == "" {
		r.driver = r.own
	}
	r.reentrant = r.o.catalogue().Reentrant(r.s.Lock)
	return r, nil
}

// startCluster starts the cluster (or takes one from the pool, or attaches
// to --target's deployment) and asks its server's version.
func (r *run) startCluster(ctx context.Context) error {
	s, o := r.s, r.o
	spec := s.clusterSpec(r.kind)
	var err error
	if o.Target != nil {
		r.logf("%s: running against the %s deployment of --target (seed %d): no container starts", s.Name, s.Cluster.Topology, o.Seed)
		r.cl, err = attachTarget(ctx, *o.Target, spec.LinkFaults, s.Keys)
		r.o.Pool = nil
	} else {
		r.logf("%s: starting %s topology (seed %d)", s.Name, s.Cluster.Topology, o.Seed)
		r.cl, r.origin, err = o.Pool.Get(ctx, spec)
	}
	if r.origin.Fallback != "" {
		r.logf("%s: a kept cluster could not be reset, started a fresh one: %s", s.Name, r.origin.Fallback)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		return err
	}
	r.server = serverOf(ctx, r.cl, spec, o.Target != nil, r.logf, s.Name)
	r.on = onContainers{r.cl}
	return nil
}

// release gives the cluster back: kept for a later run only when this one
// ended whole (ok) and healthy.
func (r *run) release(ctx context.Context, ok bool) error {
	keep := ok && r.health == "ok" && ctx.Err() == nil
	if err := r.o.Pool.Put(context.WithoutCancel(ctx), r.cl, keep); err != nil {
		return fmt.Errorf("remove cluster %s: %w", r.cl.Run, err)
	}
	return nil
}

// record makes the run's directory, writes scenario.json, opens the
// history (the Sentinels' announcements too) and starts the clients, each
// tried on the healthy cluster: one that cannot take a lock here stops
// the run, with its own words. The func returned closes what it opened.
func (r *run) record(ctx context.Context) (closeRecord func(), err error) {
	var closers []func()
	closeRecord = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	s, o := r.s, r.o
	if r.dir, err = newRunDir(o.Store, s.Name); err != nil {
		return closeRecord, err
	}
	rs := s.spec(o.Seed, r.driver, r.kind, r.reentrant)
	rs.Target = redacted(o.Target)
	if err := writeSpec(r.dir, rs); err != nil {
		return closeRecord, err
	}
	hf, err := os.Create(filepath.Join(r.dir, HistoryFile))
	if err != nil {
		return closeRecord, err
	}
	closers = append(closers, func() { hf.Close() })
	r.rec = history.NewRecorder(hf)
	r.stopWatch = r.cl.WatchFailovers(ctx, sentinelRecorder(r.rec))
	closers = append(closers, r.stopWatch)
	r.runner, err = workloads.NewRunner(r.kind.Name, r.workloadConfig())
	if err != nil {
		return closeRecord, err
	}
	r.nem, _ = nemesis.New(s.Nemesis, s.Fault)
	if err := r.runner.Probe(ctx); err != nil {
		if ctx.Err() != nil {
			return closeRecord, ErrInterrupted
		}
		return closeRecord, err
	}
	if len(s.Mix) > 0 {
		r.logf("%s: mixed in: %s (the last client slots)", s.Name, mixText(s.Mix))
	}
	r.logf("%s: %s on %s (%s workload) for %s, nemesis %s, run dir %s", s.Name, checker.Plural(s.Clients, "client process"), s.Lock, r.kind.Name, s.Time, s.Nemesis, r.dir)
	return closeRecord, nil
}

// workloadConfig is the workload's share of the spec, and its wiring.
func (r *run) workloadConfig() workloads.Config {
	s := r.s
	var inspect func(context.Context, string) (map[string]string, map[string]error)
	if r.cl != nil { // a fake deployment has no key reader
		inspect = r.cl.ReadKey
	}
	lo := s.LockOptions
	cat := r.o.catalogue()
	if ks := cat.Knobs(s.Lock); len(ks) > 0 {
		// Every knob's value, as the probe sent them (fitLocks checked them).
		lo.Library, _ = client.ResolveLibrary(ks, lo)
	}
	longest := time.Duration(cat.Behaviour(s.Lock).LongestCallMS) * time.Millisecond
	return workloads.Config{
		Shape: s.Shape, Seed: r.o.Seed, LongestCall: max(longest, -1),
		Lock: s.Lock, LockOptions: lo, Endpoints: r.on.Endpoints(), SlotEndpoints: r.on.EndpointsFor, Driver: r.driver,
		Mix: r.o.workloadMix(r.own), LogDir: filepath.Join(r.dir, "clients"), Rec: r.rec, Reenter: s.Reenter, Inspect: inspect,
	}
}

// phases runs the workload through the phases: faults for Time (a step
// that has not struck by then never will), the heal of whatever is still
// broken, convergence, then settle. The nemesis returns once the cluster
// agrees again (or its health check gave up), so the workload runs
// through the heal and the damage that lands at convergence. It returns
// the nemesis's error apart: that voids the verdict, it does not end the
// run.
func (r *run) phases(ctx context.Context) (nemesisErr, err error) {
	s := r.s
	// The fault phase starts when the nemesis lets the clients begin: once
	// the faults that must be in effect from the first acquire struck.
	var began time.Time
	var beginOnce sync.Once
	begin := func() {
		beginOnce.Do(func() {
			began = time.Now()
			r.rec.Mark(history.PhaseFaults)
			r.runner.Begin()
		})
	}
	rng := rand.New(rand.NewPCG(r.o.Seed, 0x6e656d65))
	env := nemesis.Env{Cluster: r.on, Clients: r.runner, Rec: r.rec, Rng: rng, TTL: s.TTL.D(), Halt: ctx, Begin: begin}
	if !nemesis.Idle(s.Nemesis) {
		nemesis.CheckBefore(env, s.Nemesis) // before the workload, so it cannot race what the schedule waits for
	}
	r.runner.HoldStart() // until begin
	nemesis.Stage(r.nem, env)
	nctx, ncancel := context.WithCancel(ctx)
	defer ncancel()
	faultPhase := time.AfterFunc(s.Time.D(), ncancel)
	defer faultPhase.Stop()
	stop, quit := make(chan struct{}), make(chan struct{})
	defer close(quit)
	nemErr := make(chan error, 1)
	r.workloadStart = time.Now()
	go func() {
		nemErr <- r.nem.Run(nctx, env)
		begin() // a schedule that had nothing to stage
		r.runOn(began, stop, quit)
	}()
	watched := r.o.watch(Live{Scenario: s.Name, Started: r.workloadStart, Time: s.Time.D(), Settle: s.settle(), Rec: r.rec})
	werr := r.runner.Run(ctx, stop)
	watched()
	ncancel() // a workload that failed ends the fault phase too
	nerr := <-nemErr
	switch {
	case ctx.Err() != nil:
		return nil, ErrInterrupted
	case werr != nil:
		return nil, werr
	case nerr != nil:
		r.logf("%s: nemesis: %v", s.Name, nerr)
	}
	return nerr, nil
}

// runOn, once the nemesis has healed and the cluster converged (or its
// check gave up), keeps the workload running for the settle and the rest
// of Time, and on while too few acquires were granted (up to RunOn), then
// stops it; quit abandons it.
func (r *run) runOn(began time.Time, stop, quit chan struct{}) {
	s := r.s
	wait := time.Until(began.Add(s.Time.D()))
	if !nemesis.Idle(s.Nemesis) {
		r.rec.Mark(history.PhaseSettle)
		wait = max(wait, s.settle())
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-quit:
		return
	}
	if more := runOnFor(r.rec, s.minAcquires(), s.runOn(), quit); more >= 100*time.Millisecond {
		r.logf("%s: too few grants to judge by the end of the settle: ran on %.1fs for more (bound %s)", s.Name, more.Seconds(), s.runOn())
	}
	select {
	case <-quit:
	default:
		r.rec.Mark(history.PhaseEnd)
		close(stop)
	}
}

// heal ends every fault and checks the cluster's health, so that a broken
// cluster is never mistaken for a result, saves the nodes' logs, and
// returns the history with the lock's commands deadbolt's ACL refused.
// healCtx bounds the heal and what follows it.
func (r *run) heal(ctx, healCtx context.Context) (ops []history.Op, refused string, err error) {
	s := r.s
	r.logf("%s: workload done; healing every fault and checking the cluster's health", s.Name)
	r.workloadS = time.Since(r.workloadStart).Seconds()
	r.health = "ok"
	if err := errors.Join(r.cl.HealAll(healCtx), r.cl.WaitHealthy(healCtx, s.Cluster.HealthTimeout())); err != nil {
		r.health = err.Error()
	}
	if ctx.Err() != nil {
		// Interrupted while healing: the health check did not fail, it was
		// cut short, and the run gives no verdict.
		return nil, "", ErrInterrupted
	}
	if err := r.cl.SaveLogs(context.WithoutCancel(ctx), r.dir); err != nil {
		r.logf("%s: saving node logs: %v", s.Name, err)
	}
	r.stopWatch()
	if err := r.rec.Err(); err != nil {
		return nil, "", err
	}
	ops = r.rec.Ops()
	refused, aerr := aclRefusals(healCtx, r.cl, ops)
	if aerr != nil {
		r.logf("%s: %v", s.Name, aerr)
	}
	return ops, refused, nil
}

// judge checks the history, and voids the verdict of a run that did not
// test what it set out to: its nemesis failed or never struck, it staged
// no queue, fence or re-entry it judges, deadbolt's ACL refused the lock
// (refused), or the cluster ended unhealthy.
func (r *run) judge(ops []history.Op, nemesisErr error, refused string) checker.Report {
	s := r.s
	r.logf("%s: checking %s", s.Name, checker.Plural(len(ops), "operation"))
	report := checker.Check(ops, checker.Options{Checkers: r.kind.Judges(), MinAcquires: s.minAcquires(), Reentrant: r.reentrant})
	granted := report.Stats.AcquiresOK > 0
	switch {
	case nemesisErr != nil:
		report.Void(fmt.Sprintf("the nemesis failed (%v), so the run did not test what it set out to", nemesisErr))
	case !nemesis.Idle(s.Nemesis) && len(report.FaultWindows) == 0:
		report.Void(fmt.Sprintf("the nemesis %s never injected its fault, so the run did not test what it set out to", s.Nemesis))
	}
	if s.Queue && !stoodInLine(report) && granted {
		report.Void("no acquire stood in the lock's line, so the run did not test the queue's order as it set out to")
	}
	if s.Fence && !metFence(report) && granted {
		report.Void("no holder touched the resource after a newer lease had been granted, so no token was ever checked against a newer one and the run did not test the fence as it set out to")
	}
	if s.Reenter && report.Stats.Reentries == 0 && granted {
		report.Void("no client re-entered a key it held, so the run did not test re-entry as it set out to")
	}
	if refused != "" {
		report.Unjudgeable(fmt.Sprintf("deadbolt's ACL refused the lock's own commands (%s), so the run tested the harness's rules, not the lock", refused))
	}
	if r.health != "ok" {
		report.Void(fmt.Sprintf("the cluster was not healthy after the run (%s), so the run did not end as it set out to", r.health))
	}
	return report
}

// report writes the run's results and reports into its directory, and
// the store's latest link and index.
func (r *run) report(ctx context.Context, report checker.Report, ops int) (*reports.Results, error) {
	s, o := r.s, r.o
	res := &reports.Results{
		Scenario: s.Name, Description: s.Description, Precondition: s.Precondition, Seed: o.Seed,
		Lock: s.Lock, Mix: mixText(s.Mix), Reentrant: r.reentrant, Driver: o.Driver.String(), Topology: s.Cluster.Topology, Workload: r.kind.Name, Nemesis: s.Nemesis,
		Expected: string(s.Expect), Clients: s.Clients, TimeS: s.Time.D().Seconds(),
		Ops: ops, DurationS: time.Since(r.started).Seconds(), Health: r.health,
		Dir: r.dir, ClusterReused: r.origin.Reused, ClusterFallback: r.origin.Fallback,
		SetupS: r.origin.Setup.Seconds(), WorkloadS: r.workloadS,
		Server: r.server, Rerun: o.rerun(s.Name, r.dir, r.server),
	}
	b := o.catalogue().Behaviour(s.Lock)
	res.LockClient, res.LockSettings, res.LockKnobs = b.Client, b.Settings, len(o.catalogue().Knobs(s.Lock)) > 0
	if r.runner != nil {
		res.MixedProcesses = r.runner.Mixed()
	}
	res.SetCheck(report, s.Expect.MatchesStaged(string(report.Verdict), report.Staging == ""))
	if err := reports.WriteRun(r.dir, res, report); err != nil {
		return res, err
	}
	if err := errors.Join(linkLatest(o.Store, r.dir), writeIndex(o.Store)); err != nil {
		return res, err
	}
	if ctx.Err() != nil {
		// Interrupted while the reports were written: they may be whole,
		// but the run was not let finish, so it gives no verdict.
		return nil, ErrInterrupted
	}
	return res, nil
}
