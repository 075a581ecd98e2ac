package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

const (
	maxClients = scenarios.MaxClients
	maxTime    = scenarios.MaxTime
)

type runFlags struct {
	seed    uint64
	seedSet bool
	time    time.Duration
	clients int
	lock    string
	// mix is --lock-mix: locks the last client slots open instead.
	mix      []scenarios.LockMix
	workload string
	nemesis  string
	faults   []string
	store    string
	// driver is --driver's command line; "" runs deadbolt's own client.
	driver string
	// target is --target's file: an existing deployment to run against.
	target string
	// minReplicas and maxLag are --min-replicas-to-write and
	// --min-replicas-max-lag; nil keeps the scenario's.
	minReplicas, maxLag *int
	// tls is --tls: the scenario's topology with TLS on every node.
	tls bool
	// server is --server: the server the cluster runs (cluster.Servers);
	// "": the scenario's image, DEADBOLT_REDIS_IMAGE's or the default.
	server string
	// lockOptions are --lock-option's: the library's knobs.
	lockOptions map[string]string
}

// intFlag parses an integer into *dst; the range is the cluster spec's to
// judge (Prepare), so its message names the Redis setting.
func intFlag(dst **int) func(string) error {
	return func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("not an integer: %q", s)
		}
		*dst = &n
		return nil
	}
}

func (f *runFlags) register(fs *flag.FlagSet, single bool) {
	fs.Func("seed", "seed for the workload and nemesis (default: random, printed)", func(s string) error {
		// Decimal only: Sscan took "3abc" as 3 and "0x10" as 16.
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return fmt.Errorf("not a non-negative integer: %q", s)
		}
		f.seed, f.seedSet = seed, true
		return nil
	})
	fs.StringVar(&f.store, "store", "store", "directory for run output")
	fs.StringVar(&f.target, "target", "", "run against an existing deployment described in this JSON file (endpoints: topology, masters or Sentinels, resource, credentials, addresses); no container starts, node faults are refused")
	fs.BoolVar(&f.tls, "tls", false, "every node (Redis, Sentinel, resource) speaks TLS only, with certificates drawn for the run; every client verifies them (the lock must declare TLS)")
	fs.StringVar(&f.server, "server", "", "the server every node runs: "+cluster.ServerNames()+" (default: "+cluster.Servers[0].Name+", or the image DEADBOLT_REDIS_IMAGE names); its image is built by deadbolt image --server NAME")
	fs.Func("lock-option", lockOptionHelp, lockOptions(&f.lockOptions))
	fs.StringVar(&f.driver, "driver", "", `command line of the driver that runs each client, split as a shell splits words (e.g. "python3 drivers/redispy/driver.py"; docs/driver-protocol.md); default: deadbolt's own`)
	if single {
		fs.Func("time", "workload duration (default: the scenario's)", func(s string) error {
			d, err := time.ParseDuration(s)
			switch {
			case err != nil:
				return err
			case d <= 0 || d > maxTime:
				return fmt.Errorf("must be more than 0 and at most %s, got %s", maxTime, s)
			}
			f.time = d
			return nil
		})
		fs.Func("clients", "number of clients (default: the scenario's)", func(s string) error {
			n, err := strconv.Atoi(s)
			switch {
			case err != nil:
				return fmt.Errorf("not an integer: %q", s)
			case n < 1 || n > maxClients:
				return fmt.Errorf("must be from 1 to %d (each client is a process), got %d", maxClients, n)
			}
			f.clients = n
			return nil
		})
		fs.StringVar(&f.lock, "lock", "", "lock to run (default: the scenario's)")
		fs.Func("lock-mix", "LOCK:N: N clients (the last slots) open LOCK instead, each through its own driver (a rolling upgrade: --lock redsync@v4.0.4 --lock-mix redsync@v4.0.3:1); repeat or comma-separate for more", func(s string) error {
			for _, part := range strings.Split(s, ",") {
				m, err := scenarios.ParseLockMix(part)
				if err != nil {
					return err
				}
				f.mix = append(f.mix, m)
			}
			return nil
		})
		fs.Func("min-replicas-to-write", "every lock-service master refuses writes (NOREPLICAS) with fewer good replicas than this; 0 is off (default: the scenario's)", intFlag(&f.minReplicas))
		fs.Func("min-replicas-max-lag", "seconds within which a replica must have acknowledged to count for --min-replicas-to-write (default: the scenario's, or Redis's 10)", intFlag(&f.maxLag))
		fs.StringVar(&f.workload, "workload", "", "workload to run (default: the scenario's; see: deadbolt workloads)")
		fs.StringVar(&f.nemesis, "nemesis", "", "fault schedule to run instead of the scenario's, with its defaults (see: deadbolt list; random needs --faults)")
		fs.Func("faults", "comma-separated faults the random schedule draws from (see: deadbolt faults)", nameList("fault", &f.faults))
	}
}

// probe asks --driver for its locks (its hello) before anything starts;
// without --driver the options run deadbolt's own client.
func (f *runFlags) probe(o *scenarios.RunOptions) error {
	if err := f.checkServerName(); err != nil {
		return err
	}
	if err := readTarget(f.target, o); err != nil {
		return err
	}
	if f.driver == "" {
		return nil
	}
	d, err := probeDriver(f.driver)
	if err != nil {
		return err
	}
	o.Driver, o.Locks = d.cmd, d.locks
	return nil
}

type probed struct {
	cmd   client.Command
	locks locks.Declared
}

// probeDriver starts the driver once, reads its hello and ends it. A driver
// that cannot start or says no valid hello is bad input.
func probeDriver(line string) (probed, error) {
	cmd, err := client.ParseCommand(line)
	if err != nil {
		return probed{}, badInput("--driver: %v", err)
	}
	ls, err := client.Probe(cmd)
	if err != nil {
		return probed{}, badInput("--driver: %v", err)
	}
	return probed{cmd, ls}, nil
}

func (f *runFlags) options(ctx context.Context, stderr io.Writer) scenarios.RunOptions {
	seed := f.seed
	if !f.seedSet {
		seed = rand.Uint64() % 1_000_000
	}
	return scenarios.RunOptions{
		Context: ctx, Seed: seed, Overrides: f.overrides(), Store: f.store,
		Log: func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) },
	}
}

// overrides are the changes the options given make to the scenario, in
// the order they apply: the lock before what unsets its expectation (a
// mix).
func (f *runFlags) overrides() []scenarios.Override {
	var out []scenarios.Override
	add := func(given bool, o scenarios.Override) {
		if given {
			out = append(out, o)
		}
	}
	add(f.time != 0, scenarios.SetTime(f.time))
	add(f.clients != 0, scenarios.SetClients(f.clients))
	add(f.lock != "", scenarios.SetLock(f.lock))
	add(f.mix != nil, scenarios.SetMix(f.mix))
	add(len(f.lockOptions) > 0, scenarios.SetLockOptions(f.lockOptions))
	add(f.workload != "", scenarios.SetWorkload(f.workload))
	add(f.nemesis != "" || len(f.faults) > 0, scenarios.SetNemesis(f.nemesis, f.faults))
	if f.minReplicas != nil {
		out = append(out, scenarios.SetMinReplicasToWrite(*f.minReplicas))
	}
	if f.maxLag != nil {
		out = append(out, scenarios.SetMinReplicasMaxLag(*f.maxLag))
	}
	add(f.tls, scenarios.WithTLS())
	add(f.server != "", scenarios.SetServer(f.server))
	return out
}

// preparedSuite prepares each named scenario with o; the CI suite
// against a deployment leaves out what it cannot take, and says so.
func preparedSuite(names []string, ci bool, o scenarios.RunOptions, stderr io.Writer) ([]scenarios.Scenario, error) {
	var suite []scenarios.Scenario
	for _, n := range names {
		sc, err := prepared(n, o)
		if err != nil && ci && o.Target != nil {
			fmt.Fprintf(stderr, "%s: left out: %v\n", n, err)
			continue
		}
		if err != nil {
			return nil, err
		}
		suite = append(suite, sc)
	}
	if len(suite) == 0 {
		return nil, badInput("no scenario of the CI suite can run against --target")
	}
	return suite, nil
}

// summarizeSuite prints the suite's table: a run with no verdict makes
// the exit unknown, unless a verdict contradicted its expectation.
func summarizeSuite(stdout, stderr io.Writer, suite []scenarios.Scenario, results []*reports.Results, errs []error) error {
	var all []*reports.Results
	var failures []error
	for i, sc := range suite {
		if errs[i] != nil {
			failures = append(failures, fmt.Errorf("%s: %w", sc.Name, errs[i]))
			fmt.Fprintf(stderr, "%s: no verdict: %v\n", sc.Name, errs[i])
			continue
		}
		all = append(all, results[i])
	}
	err := summarize(stdout, all)
	if len(failures) > 0 {
		var ee exitError
		if errors.As(err, &ee) && ee.code == exitContradicts {
			return err
		}
		return exitError{exitUnknown}
	}
	return err
}

// invocation is how the command line asked for a run, for its re-run
// line: the scenario file (file, "" for a named scenario) and the options
// given, each as `deadbolt run` takes it: what the run changed of its
// scenario, then where it ran. Left out are --seed (each run has its own,
// which the re-run names), --store (where the run wrote) and what spreads
// a suite's runs (--parallel, --shard, --junit, --fresh).
func (f *runFlags) invocation(file string) *scenarios.Invocation {
	var fl []string
	add := func(name, value string) {
		if value != "" {
			fl = append(fl, "--"+name, value)
		}
	}
	num := func(n int) string {
		if n == 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	setting := func(n *int) string {
		if n == nil {
			return ""
		}
		return strconv.Itoa(*n) // 0 is a value: off
	}
	var mix []string
	for _, m := range f.mix {
		mix = append(mix, m.String())
	}
	add("lock", f.lock)
	add("lock-mix", strings.Join(mix, ","))
	for _, k := range slices.Sorted(maps.Keys(f.lockOptions)) {
		add("lock-option", k+"="+f.lockOptions[k])
	}
	add("workload", f.workload)
	add("nemesis", f.nemesis)
	add("faults", strings.Join(f.faults, ","))
	if f.time != 0 {
		add("time", f.time.String())
	}
	add("clients", num(f.clients))
	add("min-replicas-to-write", setting(f.minReplicas))
	add("min-replicas-max-lag", setting(f.maxLag))
	if f.tls {
		fl = append(fl, "--tls")
	}
	add("server", f.server)
	add("target", f.target)
	add("driver", f.driver)
	return &scenarios.Invocation{File: file, Flags: fl}
}

// checkServerName refuses an unknown --server, or one beside --target
// (a deployment runs its own server), before anything else is looked at.
func (f *runFlags) checkServerName() error {
	if f.server == "" {
		return nil
	}
	if _, err := cluster.LookupServer(f.server); err != nil {
		return badInput("--server: %v", err)
	}
	if f.target != "" {
		return badInput("--server %s picks the image of the nodes deadbolt starts; --target runs against a deployment, whose server is its own", f.server)
	}
	return nil
}

// checkServer makes sure --server's image is on the engine, with the make
// target that builds it when it is not, before the store is made or any
// container starts.
func (f *runFlags) checkServer(ctx context.Context) error { return checkServerImage(ctx, f.server) }

// checkServerImage is checkServer for one server name ("" passes).
func checkServerImage(ctx context.Context, server string) error {
	if server == "" {
		return nil
	}
	img, err := cluster.ServerImage(server)
	if err == nil {
		err = cluster.CheckImage(ctx, img)
	}
	if err != nil {
		return badInput("--server %s: %v", server, err)
	}
	return nil
}

// checkStore makes sure the store can take a run's output before any
// container starts.
func checkStore(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return badInput("--store %s: %v", dir, err)
	}
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return badInput("--store %s is not writable: %v", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var f runFlags
	f.register(fs, true)
	file := fs.String("file", "", "run the scenario in this file (the scenario.json schema; a stored run's scenario.json replays that run, with its seed unless --seed is given)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *file != "" && len(pos) > 0:
		return badInput("run takes a scenario name or --file, not both (got %q and --file %s)", pos, *file)
	case *file == "" && len(pos) != 1:
		return badInput("run takes exactly one scenario name, got %d (see `deadbolt list`), or --file FILE", len(pos))
	}
	o := f.options(ctx, stderr)
	if err := f.probe(&o); err != nil {
		return err
	}
	var sc scenarios.Scenario
	if *file != "" {
		if sc, err = fromFile(ctx, *file, &f, &o, stderr); err == nil {
			err = prepare(sc, o)
		}
	} else {
		sc, err = prepared(pos[0], o)
	}
	if err != nil {
		return err
	}
	// The store is made only for input that can run.
	if err := f.checkServer(ctx); err != nil {
		return err
	}
	if err := checkStore(f.store); err != nil {
		return err
	}
	o.Invocation = f.invocation(*file)
	st := newStatus(stderr)
	st.attach(&o)
	res, err := sc.Run(ctx, o)
	st.close()
	if err != nil {
		return err
	}
	var changed []string
	for _, c := range []struct{ flag, to, was string }{{"workload", f.workload, sc.WorkloadName()}, {"nemesis", f.nemesis, sc.Nemesis}} {
		if c.to != "" && c.to != c.was {
			changed = append(changed, fmt.Sprintf("--%s %s", c.flag, c.to))
		}
	}
	for _, c := range []struct {
		flag string
		to   *int
		was  int
	}{{"min-replicas-to-write", f.minReplicas, sc.Cluster.MinReplicasToWrite}, {"min-replicas-max-lag", f.maxLag, sc.Cluster.MinReplicasMaxLag}} {
		if c.to != nil && *c.to != c.was {
			changed = append(changed, fmt.Sprintf("--%s %d", c.flag, *c.to))
		}
	}
	if f.tls && !sc.Cluster.TLS { // sc is the scenario as defined
		changed = append(changed, "--tls")
	}
	if f.lock != "" && f.lock != sc.Lock {
		fmt.Fprintf(stdout, "note: scenario %s runs lock %s in place of %s; what it must find with %s is the known-results table's: %s.\n",
			sc.Name, f.lock, sc.Lock, f.lock, scenarios.Expected(sc.Name, f.lock))
	}
	if len(changed) > 0 {
		fmt.Fprintf(stdout, "note: scenario %s's expectation was judged on its own workload and nemesis; this run changed them (%s) under the same expectation.\n",
			sc.Name, strings.Join(changed, ", "))
	}
	return summarize(stdout, []*reports.Results{res})
}

func cmdScenario(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("scenario", flag.ContinueOnError)
	var f runFlags
	f.register(fs, false)
	parallel, parallelSet := 2, false
	fs.Func("parallel", "how many scenarios run at once (1-8, default 2): runs mostly wait on leases and faults", func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxParallel {
			return fmt.Errorf("must be from 1 to %d, got %q", maxParallel, s)
		}
		parallel, parallelSet = n, true
		return nil
	})
	junit := fs.String("junit", "", "write the suite's results as JUnit XML to this file (one test case per scenario)")
	var shard shardFlag
	shard.register(fs, "the suite")
	fresh := fs.Bool("fresh", false, "start every scenario's cluster anew instead of reusing, reset, one an earlier scenario of the same topology used")
	names, err := parse(fs, args)
	if err != nil {
		return err
	}
	ci := len(names) == 0
	if ci {
		names = scenarios.CISuite()
	}
	// Validate every name before the first container starts, and before
	// the store or the JUnit file's directory is made.
	o := f.options(ctx, stderr)
	if err := f.probe(&o); err != nil {
		return err
	}
	if o.Target != nil {
		// Runs against one deployment share its nodes and their keys.
		if parallelSet && parallel > 1 {
			return badInput("--parallel %d: scenarios against one --target share its nodes and keys, and run one at a time", parallel)
		}
		parallel = 1
	}
	suite, err := preparedSuite(names, ci, o, stderr)
	if err != nil {
		return err
	}
	if shard.set() {
		all := len(suite)
		suite = scenarios.Shard(suite, shard.i, shard.n)
		fmt.Fprintf(stderr, "shard %d/%d: %d of the suite's %s\n", shard.i, shard.n, len(suite), checker.Plural(all, "scenario"))
	}
	if o.Target != nil {
		if err := scenarios.SuiteKeysFree(ctx, *o.Target, suite); err != nil {
			return err
		}
	}
	if err := f.checkServer(ctx); err != nil {
		return err
	}
	if err := checkStore(f.store); err != nil {
		return err
	}
	if err := checkJUnit(*junit); err != nil {
		return err
	}
	if o.Target == nil && !*fresh {
		pool, err := newPool(suite, o)
		if err != nil {
			return err
		}
		// Every exit path removes the clusters kept for later runs.
		defer pool.Close(context.WithoutCancel(ctx))
		o.Pool = pool
	}
	o.Invocation = f.invocation("")
	st := newStatus(stderr)
	st.attach(&o)
	started := time.Now()
	results, errs := runSuite(ctx, suite, parallel, o)
	st.close()
	if ctx.Err() != nil {
		return scenarios.ErrInterrupted
	}
	if err := writeJUnit(*junit, suite, results, errs, started); err != nil {
		return err
	}
	return summarizeSuite(stdout, stderr, suite, results, errs)
}

// maxParallel bounds concurrent scenarios: each one is a cluster of
// containers and a process per client.
const maxParallel = 8

// runSuite runs the scenarios, parallel at a time, and returns their
// results in suite order. Each run has its own cluster, networks and seed.
func runSuite(ctx context.Context, suite []scenarios.Scenario, parallel int, o scenarios.RunOptions) ([]*reports.Results, []error) {
	return runSeeded(ctx, suite, nil, parallel, o)
}

// runSeeded is runSuite with run i's seed seeds[i] (nil: o's for all).
func runSeeded(ctx context.Context, suite []scenarios.Scenario, seeds []uint64, parallel int, o scenarios.RunOptions) ([]*reports.Results, []error) {
	results := make([]*reports.Results, len(suite))
	errs := make([]error, len(suite))
	slots := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	sched := newSchedule(suite, o)
	for range suite {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		i := sched.next()
		sc := suite[i]
		if ctx.Err() != nil {
			errs[i] = scenarios.ErrInterrupted
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			o := o
			if seeds != nil {
				o.Seed = seeds[i]
			}
			results[i], errs[i] = sc.Run(ctx, o)
		})
	}
	wg.Wait()
	return results, errs
}

// newPool expects the clusters the suite's runs will ask for.
func newPool(suite []scenarios.Scenario, o scenarios.RunOptions) (*cluster.Pool, error) {
	var specs []cluster.Spec
	for _, sc := range suite {
		spec, err := sc.ClusterSpec(o)
		if err != nil {
			return nil, badInput("%v", err)
		}
		specs = append(specs, spec)
	}
	return cluster.NewPool(specs), nil
}

func prepared(name string, o scenarios.RunOptions) (scenarios.Scenario, error) {
	sc, err := scenarios.Get(name)
	if err != nil {
		return sc, badInput("%v", err)
	}
	return sc, prepare(sc, o)
}

// prepare judges the scenario with the options before anything starts.
func prepare(sc scenarios.Scenario, o scenarios.RunOptions) error {
	if _, err := sc.Prepare(o); err != nil {
		if errors.Is(err, scenarios.ErrInterrupted) {
			return err // a Ctrl-C while a library's driver was built
		}
		return badInput("%v", err)
	}
	return nil
}

// summarize prints the comparison table and the evidence, and turns the
// verdicts into the exit code.
func summarize(stdout io.Writer, rs []*reports.Results) error {
	fmt.Fprintln(stdout)
	if err := reports.Table(stdout, rs); err != nil {
		return err
	}
	code := exitOK
	for _, r := range rs {
		fmt.Fprintf(stdout, "\n%s: %s (expected %s). %s\n", r.Scenario, r.Verdict, r.Expected, r.Reason)
		for _, line := range reports.FirstOfEach(r, 3) {
			fmt.Fprintf(stdout, "  %s\n", line)
		}
		if r.Health != "ok" {
			fmt.Fprintf(stdout, "  the healed cluster failed its final health check: %s\n", r.Health)
		}
		fmt.Fprintf(stdout, "  report: %s (and %s beside it)\n", filepath.Join(r.Dir, reports.HTMLFile), reports.ReportFile)
		switch {
		case r.Contradicts():
			code = exitContradicts
		case (r.Undecided() || r.Verdict == "unknown" || r.Health != "ok") && code == exitOK:
			code = exitUnknown
		}
	}
	if len(rs) > 0 {
		// Every run's directory is <store>/<scenario>/<time>.
		fmt.Fprintf(stdout, "\nevery run in the store: %s\n", filepath.Join(filepath.Dir(filepath.Dir(rs[0].Dir)), reports.IndexFile))
	}
	if code != exitOK {
		return exitError{code}
	}
	return nil
}
