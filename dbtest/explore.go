package dbtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/explore"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// ExploreOption tunes Explore.
type ExploreOption func(*exploreConfig)

type exploreConfig struct {
	runs, parallel, shrink, shrinkRuns int
	seed                               uint64
	against, store                     string
}

// Runs is the exploration's budget: how many scenarios it generates and
// runs (default 20), each also on the second lock with Against.
func Runs(n int) ExploreOption { return func(c *exploreConfig) { c.runs = n } }

// Against runs every generated scenario on a second lock too (deadbolt's
// own of the same algorithm, say): what breaks your lock and not that one
// is what Explore reports.
func Against(lock string) ExploreOption { return func(c *exploreConfig) { c.against = lock } }

// ExploreSeed draws the scenarios (default 1): the same seed draws the same
// scenarios.
func ExploreSeed(seed uint64) ExploreOption { return func(c *exploreConfig) { c.seed = seed } }

// ExploreStore is the directory the exploration is written under (default
// os.TempDir()/dbtest).
func ExploreStore(dir string) ExploreOption { return func(c *exploreConfig) { c.store = dir } }

// Explore is `deadbolt explore` for a lock of your own: it generates
// scenarios from what the lock declares (its calls on a held lease, its
// watchdog, where it runs), aims their faults at the calls that decide a
// lease, runs each with this test binary as every client process, shrinks
// what broke the lock to a small scenario file that breaks it on three
// seeds, and fails the test once per finding with that file, the command
// that replays it and its draft write-up. It returns the exploration's
// report (explore.json). Bad input fails the test before any container
// starts; without a Docker engine it skips, except under CI=true.
func Explore(t *testing.T, lock string, opts ...ExploreOption) *explore.Report {
	t.Helper()
	cfg := exploreConfig{runs: 20, parallel: 4, shrink: 1, shrinkRuns: 40, seed: 1, store: filepath.Join(os.TempDir(), "dbtest")}
	for _, o := range opts {
		o(&cfg)
	}
	if err := preparedMain(lock); err != nil {
		t.Fatal(err)
	}
	if cfg.runs < 1 {
		t.Fatalf("dbtest: Runs(%d): an exploration needs at least one run", cfg.runs)
	}
	p, err := clients(lock)
	if err != nil {
		t.Fatal(err)
	}
	o := explore.Options{Lock: lock, Against: cfg.against, Runs: cfg.runs, Seed: cfg.seed, Parallel: cfg.parallel,
		Shrink: cfg.shrink, ShrinkRuns: cfg.shrinkRuns,
		Dir: filepath.Join(cfg.store, "explore", fmt.Sprintf("%s-%d-%s", explore.FileSafe(lock), cfg.seed, time.Now().UTC().Format("20060102T150405Z"))),
		Run: scenarios.RunOptions{Driver: p.driver, Locks: p.locks, Log: t.Logf}}
	e, err := explore.New(o)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	clustertest.RequireDocker(t)
	var rep *explore.Report
	err = whileRunning(t, "the exploration of "+lock, func(ctx context.Context) error {
		var err error
		rep, err = e.Run(ctx)
		return err
	})
	if err != nil {
		t.Fatalf("exploring %s: %v", lock, err)
	}
	t.Logf("%s; report: %s", explore.Summary(rep), filepath.Join(rep.Dir, explore.HTMLFile))
	for _, f := range rep.Findings {
		against := ""
		if f.Against != "" {
			against = ", not " + f.Against
		}
		t.Errorf("explore found %s breaking %s%s (run %d: %s at %s)\n  file: %s\n  replay: %s\n  write-up: %s",
			f.Anomaly, f.Lock, against, f.Scenario, f.Aim.Fault, f.Aim.Call, f.File, f.Replay, f.Writeup)
	}
	if rep.Undecided && len(rep.Findings) == 0 {
		t.Errorf("explore could not say: %d of the runs reached no verdict", rep.Unknown)
	}
	return rep
}
