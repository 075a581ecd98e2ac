package explore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// Options are one exploration's.
type Options struct {
	// Lock is the lock explored; Against, when set, a second lock every
	// generated scenario runs on too. LockKnobs and AgainstKnobs are the
	// knobs of each one's library it runs with (--lock-option,
	// --against-option): the same lock with other knobs is another lock to
	// tell apart. New names each side by its Label.
	Lock, Against           string
	LockKnobs, AgainstKnobs map[string]string
	// Runs is the budget: how many scenarios to generate and run (each
	// twice with Against). Never a wall-clock time.
	Runs int
	// Seed draws every scenario and every run's seed.
	Seed uint64
	// Parallel is how many runs go at once.
	Parallel int
	// Dir is the exploration's directory: the generated scenario files,
	// the runs, the shrunk findings and the reports go there.
	Dir string
	// Run is what every run takes: the driver and its locks (--driver),
	// the overrides of the command line (--server, --tls), the target,
	// the log. Its seed and store are the exploration's.
	Run scenarios.RunOptions
	// Shrink is how many findings to shrink (the first of each kind, in
	// the order they were found); ShrinkRuns bounds the runs one shrink
	// takes.
	Shrink, ShrinkRuns int
	// Seeds is how many seeds a shrunk scenario must break the lock on
	// (and leave Against unbroken on): 3 unless set.
	Seeds int
	// Log hears the exploration's progress, a line a run and a line a
	// candidate; nil: Run.Log, which also hears every run's own lines.
	Log func(format string, args ...any)
}

func (o Options) seeds() int {
	if o.Seeds > 0 {
		return o.Seeds
	}
	return 3
}

func (o Options) logf(format string, args ...any) {
	switch {
	case o.Log != nil:
		o.Log(format, args...)
	case o.Run.Log != nil:
		o.Run.Log(format, args...)
	}
}

// Check refuses options no exploration can run with, before anything
// starts: a bad budget, a lock no catalogue knows, a second lock that is
// the first.
func (o Options) Check() error {
	switch {
	case o.Lock == "":
		return errors.New("explore needs --lock")
	case o.Runs < 1 || o.Runs > MaxRuns:
		return fmt.Errorf("--runs must be from 1 to %d, got %d", MaxRuns, o.Runs)
	case o.Parallel < 1 || o.Parallel > MaxParallel:
		return fmt.Errorf("--parallel must be from 1 to %d, got %d", MaxParallel, o.Parallel)
	case o.Against == "" && len(o.AgainstKnobs) > 0:
		return errors.New("--against-option sets the knobs of --against's lock: name one (the lock explored, for another setting of it)")
	case o.Against != "" && Label(o.Against, o.AgainstKnobs) == Label(o.Lock, o.LockKnobs):
		return fmt.Errorf("--against %s is the lock explored, with the same options: name another lock, or give it other options (--against-option), to tell them apart", Label(o.Against, o.AgainstKnobs))
	case o.Run.Target != nil && o.Parallel > 1:
		return fmt.Errorf("--parallel %d: runs against one --target share its nodes, and run one at a time", o.Parallel)
	}
	return nil
}

// Limits: each run is a cluster of containers and a process per client.
const (
	MaxRuns     = 1000
	MaxParallel = 8
)

// explorer is one exploration running.
type explorer struct {
	o    Options
	pool *cluster.Pool
	// run makes one run (runOne; a test's fake lock).
	run func(ctx context.Context, s scenarios.Scenario, lock string, seed uint64) Run
	// offers are the lock's and the second lock's declarations.
	offer, against Offer
}

// Report is explore.json: what was generated and run, what the runs
// struck, and the findings with their shrunk files.
type Report struct {
	Lock    string `json:"lock"`
	Against string `json:"against,omitempty"`
	Seed    uint64 `json:"seed"`
	Runs    int    `json:"runs"`
	// Offer is what the lock declared, which the scenarios were drawn from.
	Offer Offer `json:"offer"`
	// Refused counts draws the lock could not run (drawn again).
	Refused   int        `json:"refused"`
	Scenarios []Scenario `json:"scenarios"`
	// Verdicts counts the runs of each lock by verdict.
	Verdicts map[string]map[string]int `json:"verdicts"`
	Coverage []Coverage                `json:"coverage"`
	Findings []Finding                 `json:"findings"`
	// Differences are the scenarios whose verdicts told the two locks
	// apart, and how the anomalies of those that broke both compare.
	Differences []Difference `json:"differences,omitempty"`
	// Unknown is how many runs reached no verdict; too many of them and the
	// exploration cannot say (Undecided). NotApplicable runs showed that
	// what they aimed at cannot arise for the lock, and are not counted.
	Unknown       int     `json:"unknown"`
	NotApplicable int     `json:"not_applicable,omitempty"`
	Undecided     bool    `json:"undecided,omitempty"`
	Started       string  `json:"started"`
	DurationS     float64 `json:"duration_s"`
	// ExploreS is how long the generated runs took, before any shrink.
	ExploreS float64 `json:"explore_s"`
	Dir      string  `json:"dir"`
}

// Scenario is one generated scenario and its runs.
type Scenario struct {
	Index int `json:"index"`
	// File is the scenario file, relative to the exploration's directory.
	File string `json:"file"`
	Aim  Aim    `json:"aim"`
	Seed uint64 `json:"seed"`
	// Against is "" when the second lock ran it too, else why it could not.
	Against string `json:"against_refused,omitempty"`
	Runs    []Run  `json:"runs"`
}

// Run is one run of a scenario with one lock.
type Run struct {
	Lock    string `json:"lock"`
	Seed    uint64 `json:"seed"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
	// Dir is the run's directory; "" for a run that failed before it had one.
	Dir string `json:"dir,omitempty"`
	// Anomalies counts the violations the checks found, by kind (staging
	// troubles left out).
	Anomalies map[string]int `json:"anomalies,omitempty"`
	// Strikes counts the faults that struck.
	Strikes int `json:"strikes"`
	// NotApplicable says, from the run's evidence, why what it aimed at
	// cannot arise for the lock (a call that is one step).
	NotApplicable string `json:"not_applicable,omitempty"`
	Error         string `json:"error,omitempty"`
	// results are the run's, for the comparison; not written.
	results *reports.Results
}

// Explorer is an exploration ready to run: its options checked, both
// locks' declarations read and every scenario drawn, before anything
// starts.
type Explorer struct {
	x    *explorer
	gens []Generated
	rep  *Report
}

// New checks o, reads what the locks declare (building a library's driver
// on first use) and draws every scenario: an error here is bad input, and
// no container has started.
func New(o Options) (*Explorer, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	// From here each side is its label (the lock and its knobs).
	o.Lock, o.LockKnobs = Label(o.Lock, o.LockKnobs), nil
	if o.Against != "" {
		o.Against, o.AgainstKnobs = Label(o.Against, o.AgainstKnobs), nil
	}
	x := &explorer{o: o}
	var err error
	if x.offer, err = x.offerOf(o.Lock); err != nil {
		return nil, err
	}
	if o.Against != "" {
		if x.against, err = x.offerOf(o.Against); err != nil {
			return nil, err
		}
	}
	x.offer.Target = o.Run.Target != nil
	rep := &Report{Lock: o.Lock, Against: o.Against, Seed: o.Seed, Runs: o.Runs, Offer: x.offer, Dir: o.Dir}
	gens, err := x.generate(rep)
	if err != nil {
		return nil, err
	}
	return &Explorer{x: x, gens: gens, rep: rep}, nil
}

// Generated are the scenarios the exploration will run, in order.
func (e *Explorer) Generated() []Generated { return e.gens }

// Run writes the generated scenario files, runs each on the lock (and the
// second lock), shrinks the first findings, and writes explore.json,
// explore.md and explore.html into the exploration's directory. Every
// container and client it started is removed on every path.
func (e *Explorer) Run(ctx context.Context) (*Report, error) {
	x, gens, rep := e.x, e.gens, e.rep
	o := x.o
	started := time.Now()
	rep.Started = started.UTC().Format(time.RFC3339)
	if err := os.MkdirAll(filepath.Join(o.Dir, "scenarios"), 0o755); err != nil {
		return nil, err
	}
	for i, g := range gens {
		if err := writeScenario(filepath.Join(o.Dir, rep.Scenarios[i].File), g.Scenario, g.Seed); err != nil {
			return nil, err
		}
	}
	x.pool = cluster.NewPool(x.specs(gens))
	defer x.pool.Close(context.WithoutCancel(ctx))
	x.runAll(ctx, gens, rep)
	if ctx.Err() != nil {
		return nil, scenarios.ErrInterrupted
	}
	rep.ExploreS = time.Since(started).Seconds()
	judge(rep)
	rep.Coverage = coverage(gens, rep)
	if err := x.shrinkFindings(ctx, gens, rep); err != nil {
		return nil, err
	}
	rep.DurationS = time.Since(started).Seconds()
	return rep, writeReport(rep)
}

// Explore is New, then Run.
func Explore(ctx context.Context, o Options) (*Report, error) {
	e, err := New(o)
	if err != nil {
		return nil, err
	}
	return e.Run(ctx)
}

// offerOf reads a lock's declaration: from the driver's hello when the
// driver offers it, the driver built for a library at a version, or
// deadbolt's own locks.
func (x *explorer) offerOf(label string) (Offer, error) {
	c, err := x.catalogue(label)
	if err != nil {
		return Offer{}, err
	}
	lock, knobs := sideOf(label)
	o, err := OfferOf(c, lock)
	o.Knobs = knobs
	return o, err
}

// catalogue is what declares the side label names, as it runs with its
// knobs.
func (x *explorer) catalogue(label string) (locks.Catalogue, error) {
	o := x.runOptions(label, 0)
	probe := on(scenarios.Scenario{}, label)
	c, err := probe.Catalogue(o)
	if err != nil {
		return nil, err
	}
	return c, c.Lookup(probe.Lock)
}

// runOptions are a run's of lock with seed: --driver's only for a lock the
// driver offers (the second lock may be deadbolt's own or a library at a
// version, which runs its own driver), and the exploration's pool and
// directory.
func (x *explorer) runOptions(label string, seed uint64) scenarios.RunOptions {
	o := x.o.Run
	o.Seed, o.Store, o.Pool, o.Invocation = seed, x.o.Dir, x.pool, nil
	if lock, _ := sideOf(label); o.Locks != nil && o.Locks.Lookup(lock) != nil {
		o.Driver, o.Locks = client.Command{}, nil
	}
	return o
}

// generate draws the scenarios, each prepared for the lock (and the
// second lock: a scenario it cannot run is drawn again, and run on the
// first alone only when no draw fits both).
func (x *explorer) generate(rep *Report) ([]Generated, error) {
	var gens []Generated
	for i := range x.o.Runs {
		g, refused, err := Draw(x.offer, x.o.Seed, i, x.runOptions(x.o.Lock, 0))
		if err != nil {
			return nil, err
		}
		sc := Scenario{Index: i, File: filepath.Join("scenarios", g.Scenario.Name+".json"), Aim: g.Aim, Seed: g.Seed}
		if x.o.Against != "" {
			for try := refused; ; try++ {
				_, err := x.prepared(g.Scenario, x.o.Against)
				if err == nil {
					sc.Against = ""
					break
				}
				sc.Against = err.Error()
				if try+1 >= maxDraws {
					break
				}
				next, n, err := drawFrom(x.offer, x.o.Seed, i, try+1, x.runOptions(x.o.Lock, 0))
				if err != nil {
					break
				}
				g, refused, try = next, n, n-1
			}
		}
		// The scenario as it runs: the command line's overrides (a server,
		// TLS) made part of the file, so that it replays alone.
		p, err := g.Scenario.Prepare(x.runOptions(x.o.Lock, 0))
		if err != nil {
			return nil, err
		}
		p.Description, p.Name = g.Scenario.Description, g.Scenario.Name
		g.Scenario = p
		rep.Refused += refused
		gens = append(gens, g)
		rep.Scenarios = append(rep.Scenarios, sc)
	}
	return gens, nil
}

// prepared is s run by the side label names, prepared to run.
func (x *explorer) prepared(s scenarios.Scenario, label string) (scenarios.Scenario, error) {
	return on(s, label).Prepare(x.runOptions(label, 0))
}

// specs are the clusters the runs will ask for, for the pool to keep.
func (x *explorer) specs(gens []Generated) []cluster.Spec {
	var specs []cluster.Spec
	for _, g := range gens {
		for _, lock := range x.locks() {
			if spec, err := g.Scenario.ClusterSpec(x.runOptions(lock, 0)); err == nil {
				specs = append(specs, spec)
			}
		}
	}
	return specs
}

// locks are the locks every scenario runs on.
func (x *explorer) locks() []string {
	if x.o.Against == "" {
		return []string{x.o.Lock}
	}
	return []string{x.o.Lock, x.o.Against}
}

// job is one run to make.
type job struct {
	scenario int // index into the report's scenarios
	s        scenarios.Scenario
	lock     string
	seed     uint64
}

// runAll runs every scenario on every lock, o.Parallel at a time, the
// lock and its counterpart of one scenario side by side.
func (x *explorer) runAll(ctx context.Context, gens []Generated, rep *Report) {
	var jobs []job
	for i, g := range gens {
		for _, lock := range x.locks() {
			if lock == x.o.Against && rep.Scenarios[i].Against != "" {
				continue
			}
			jobs = append(jobs, job{scenario: i, s: g.Scenario, lock: lock, seed: g.Seed})
		}
	}
	runs := x.runJobs(ctx, jobs, func(done, total int, j job, r Run) {
		x.o.logf("explore: %d/%d runs: %s on %s: %s", done, total, j.s.Name, r.Lock, r.Verdict)
	})
	for k, r := range runs {
		sc := &rep.Scenarios[jobs[k].scenario]
		sc.Runs = append(sc.Runs, r)
	}
}

// runJobs runs the jobs, o.Parallel at a time, and returns their runs in
// order; told hears of each as it ends.
func (x *explorer) runJobs(ctx context.Context, jobs []job, told func(done, total int, j job, r Run)) []Run {
	runs := make([]Run, len(jobs))
	slots := make(chan struct{}, x.o.Parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for k, j := range jobs {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			r := x.runWith(ctx, j.s, j.lock, j.seed)
			mu.Lock()
			runs[k] = r
			done++
			if told != nil {
				told(done, len(jobs), j, r)
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return runs
}

// runWith makes one run with x.run, or runOne.
func (x *explorer) runWith(ctx context.Context, s scenarios.Scenario, lock string, seed uint64) Run {
	if x.run != nil {
		return x.run(ctx, s, lock, seed)
	}
	return x.runOne(ctx, s, lock, seed)
}

// runOne runs s on lock with seed and reads what it found.
func (x *explorer) runOne(ctx context.Context, s scenarios.Scenario, label string, seed uint64) Run {
	r := Run{Lock: label, Seed: seed}
	s = on(s, label)
	res, err := s.Run(ctx, x.runOptions(label, seed))
	if err != nil {
		r.Verdict, r.Error = "error", err.Error()
		return r
	}
	r.results = res
	r.Verdict, r.Reason, r.NotApplicable = res.Verdict, res.Reason, res.NotApplicable
	if rel, err := filepath.Rel(x.o.Dir, res.Dir); err == nil {
		r.Dir = rel
	} else {
		r.Dir = res.Dir
	}
	r.Anomalies = violations(res)
	r.Strikes = struck(res)
	return r
}

// staging are the anomaly kinds that say the run did not stage what it set
// out to, not what the lock did.
var staging = []string{checker.KindFaultFailed, checker.KindPrecondition, checker.KindUnstagedFailover}

// violations counts a run's anomalies by kind, staging troubles left out.
func violations(res *reports.Results) map[string]int {
	out := map[string]int{}
	for _, a := range res.Anomalies {
		if !slices.Contains(staging, a.Kind) {
			out[a.Kind]++
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// struck counts the faults of a run that struck: the windows the history
// shows.
func struck(res *reports.Results) int { return len(res.FaultWindows) }

// writeScenario writes s as a scenario file with the seed its run took.
func writeScenario(path string, s scenarios.Scenario, seed uint64) error {
	spec := s.Spec()
	spec.Seed = seed
	b, err := scenarios.MarshalFile(spec, "checkers", "driver")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
