package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/locks"
	_ "github.com/deadbolt-lab/deadbolt/locks/all" // every lock selectable by name
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// RunOptions override a scenario's defaults for one run.
type RunOptions struct {
	Seed    uint64
	Time    time.Duration // 0: the scenario's
	Clients int           // 0: the scenario's
	Lock    string        // "": the scenario's
	Store   string        // root of the run store
	// Log receives progress lines; nil discards them.
	Log func(format string, args ...any)
}

// ErrInterrupted is returned when ctx ended before the run finished; the
// cluster is removed and no verdict is given.
var ErrInterrupted = errors.New("run interrupted")

// Prepare applies the options and rejects combinations that cannot work,
// before any container starts.
func (s Scenario) Prepare(o RunOptions) (Scenario, error) {
	if o.Time != 0 {
		s.Time = o.Time
	}
	if o.Clients != 0 {
		s.Clients = o.Clients
	}
	if o.Lock != "" {
		s.Lock = o.Lock
	}
	if s.Clients < 1 {
		return s, fmt.Errorf("--clients must be at least 1, got %d", s.Clients)
	}
	groups := 1
	if s.Cluster.Topology == cluster.Independent {
		groups = s.Cluster.Defaults().Masters
	}
	if err := locks.Fits(s.Lock, groups); err != nil {
		return s, fmt.Errorf("lock %s cannot run in scenario %s (%s topology): %w", s.Lock, s.Name, s.Cluster.Topology, err)
	}
	n, err := nemesis.New(s.Nemesis)
	if err != nil {
		return s, err
	}
	if need := n.Span(s.TTL) + 2*time.Second; s.Time < need {
		return s, fmt.Errorf("scenario %s needs --time of at least %s (nemesis schedule %s plus 2s), got %s", s.Name, need, n.Span(s.TTL), s.Time)
	}
	return s, nil
}

// Run executes the scenario: start the cluster, drive the workload while the
// nemesis injects its faults, heal, check the history and write the run's
// directory. The cluster is removed on every path.
func (s Scenario) Run(ctx context.Context, o RunOptions) (res *reports.Results, err error) {
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	s, err = s.Prepare(o)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	logf("%s: starting %s topology (seed %d)", s.Name, s.Cluster.Topology, o.Seed)
	cl, err := cluster.Start(ctx, s.Cluster)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
		return nil, err
	}
	defer func() {
		if cerr := cl.Close(context.WithoutCancel(ctx)); cerr != nil {
			err = errors.Join(err, fmt.Errorf("remove cluster %s: %w", cl.Run, cerr))
		}
	}()
	// The run directory comes once there is something to record in it.
	dir, err := newRunDir(o.Store, s.Name)
	if err != nil {
		return nil, err
	}
	hf, err := os.Create(filepath.Join(dir, HistoryFile))
	if err != nil {
		return nil, err
	}
	defer hf.Close()

	rec := history.NewRecorder(hf)
	rng := rand.New(rand.NewPCG(o.Seed, 0x6e656d65))
	nem, _ := nemesis.New(s.Nemesis)
	w := &workloads.Mutex{
		Clients: s.Clients, Keys: s.Keys, TTL: s.TTL,
		HoldMin: s.HoldMin, HoldMax: s.HoldMax, Pause: s.Pause,
		Seed: o.Seed, Rec: rec,
		Lock: func(ev locks.Events) (locks.Lock, func(), error) {
			clients := cl.Clients(cluster.DefaultClientOptions())
			closeAll := func() {
				for _, c := range clients {
					c.Close()
				}
			}
			l, err := locks.New(s.Lock, clients, locks.Options{TTL: s.TTL, Events: ev})
			if err != nil {
				closeAll()
				return nil, nil, err
			}
			return l, closeAll, nil
		},
	}

	logf("%s: %d clients on %s for %s, nemesis %s, run dir %s", s.Name, s.Clients, s.Lock, s.Time, s.Nemesis, dir)
	nemErr := make(chan error, 1)
	go func() { nemErr <- nem.Run(ctx, nemesis.Env{Cluster: cl, Rec: rec, Rng: rng, TTL: s.TTL}) }()
	stop := make(chan struct{})
	timer := time.AfterFunc(s.Time, func() { close(stop) })
	defer timer.Stop()
	werr := w.Run(ctx, stop)
	nerr := <-nemErr
	if ctx.Err() != nil {
		return nil, ErrInterrupted
	}
	if err := errors.Join(werr, nerr); err != nil {
		return nil, err
	}

	// Every run ends healed and checked, so a broken cluster is never
	// mistaken for a result.
	healCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	health := "ok"
	if err := errors.Join(cl.HealAll(healCtx), cl.WaitHealthy(healCtx, 60*time.Second)); err != nil {
		health = err.Error()
	}
	if err := cl.SaveLogs(context.WithoutCancel(ctx), dir); err != nil {
		logf("%s: saving node logs: %v", s.Name, err)
	}
	if err := rec.Err(); err != nil {
		return nil, err
	}

	ops := rec.Ops()
	result := checker.Check(ops, checker.Options{LinearizabilityTimeout: time.Minute, MinAcquires: 10})
	res = &reports.Results{
		Scenario: s.Name, Description: s.Description, Seed: o.Seed,
		Lock: s.Lock, Topology: s.Cluster.Topology, Nemesis: s.Nemesis,
		Expected: string(s.Expect), Clients: s.Clients, TimeS: s.Time.Seconds(),
		Ops: len(ops), DurationS: time.Since(started).Seconds(), Health: health,
		Dir: dir,
	}
	res.SetCheck(result, s.Expect.Matches(string(result.Verdict)))
	if err := reports.WriteRun(dir, res, result); err != nil {
		return res, err
	}
	return res, linkLatest(o.Store, dir)
}
