// Package dbtest runs deadbolt's scenarios against a lock of your own from
// go test: real Redis masters, replicas and Sentinels in Docker containers,
// real faults, every client an operating-system process with your lock
// inside, and the checkers' verdict held against the one you expect.
//
// A lock is a locks.Factory, the signature deadbolt's own locks have: it gets
// the connection targets (endpoints.Endpoints: topology, master groups,
// Sentinels, the published port of every logical address, the credentials)
// and opens its own connections, lazily, with any client library. go-redis
// users call o.Clients(e) (or locks.OneClient); others dial through
// e.Dialer(), which maps the addresses Sentinel reports to the ports the
// containers publish, and authenticate with e.Username and e.Password (and
// e.SentinelUsername, e.SentinelPassword to the Sentinels): every node asks,
// and the lock user may run the commands locks need, no more (see
// docs/driver-protocol.md).
//
//	func TestMain(m *testing.M) {
//		dbtest.Register("mylock", "SET NX PX, owner-checked release", mylock.New)
//		dbtest.Main(m)
//	}
//
//	func TestMyLock(t *testing.T) {
//		dbtest.Run(t, "mylock", dbtest.Expect{
//			"failover-simple": dbtest.Unsafe, // asynchronous replication loses it
//			"crash-simple":    dbtest.Safe,   // the TTL frees a dead holder's key
//		})
//	}
//
// Clients are processes, so that a pause is a real SIGSTOP and a crash a real
// SIGKILL: Run starts each client as this test binary again, and Main (called
// from TestMain) makes it serve deadbolt's client protocol with your lock.
// Each run writes its report (report.html, report.md, the history) under the
// store, os.TempDir()/dbtest unless Store says otherwise; a run whose verdict
// contradicts the expectation, or is unknown, fails its test with the reason,
// the first anomalies and the report's path. Run needs a Docker engine and
// the image deadbolt/redis:7.0 (or DEADBOLT_REDIS_IMAGE); without an engine it
// skips, except under CI=true. Containers and client processes are removed on
// every path: a failure, an interrupt (SIGINT, SIGTERM: the run stops, cleans
// up and the signal is raised again, or the binary exits 130 where the signal
// is ignored), or go test's -timeout coming near (the run stops 30 s before
// it).
package dbtest

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// Expectation is the verdict expected of a lock in a scenario.
type Expectation = scenarios.Expectation

const (
	// Safe: the checkers must find no violation (verdict valid).
	Safe = scenarios.Safe
	// Unsafe: they must find one (verdict invalid), a failure you know of.
	Unsafe = scenarios.Unsafe
)

// Expect maps scenario names (deadbolt list) to what is expected of the lock
// there.
type Expect map[string]Expectation

// Register makes a lock selectable by name, in this process and in its client
// processes: call it from TestMain before Main, or from an init function.
// It is locks.Register; points are the named points where the lock calls
// Options.Point (for scenarios that stop a client inside a lock).
func Register(name, summary string, f locks.Factory, points ...string) {
	locks.Register(name, summary, f, points...)
}

// Option tunes Run.
type Option func(*config)

type config struct {
	seeds []uint64
	store string
}

// Seeds runs every scenario once per seed (default: seed 1). The seed fixes
// the clients' keys, hold times and the nemesis's choices.
func Seeds(seeds ...uint64) Option { return func(c *config) { c.seeds = seeds } }

// Store is the directory the runs are written under (default
// os.TempDir()/dbtest).
func Store(dir string) Option { return func(c *config) { c.store = dir } }

// cleanupMargin is how long before go test's -timeout a run is stopped, so
// that it removes its containers before the test binary panics.
const cleanupMargin = 30 * time.Second

// Run runs each scenario of expect with the named lock in place of the
// scenario's own (as `deadbolt run NAME --lock LOCK` does), one subtest per
// scenario and seed, and fails a subtest whose verdict is not the one
// expected. Bad input (an unknown lock or scenario, a lock the scenario's
// topology cannot serve, no TestMain calling Main) fails the test before any
// container starts.
func Run(t *testing.T, lock string, expect Expect, opts ...Option) {
	t.Helper()
	cfg := config{seeds: []uint64{1}, store: filepath.Join(os.TempDir(), "dbtest")}
	for _, o := range opts {
		o(&cfg)
	}
	plan, err := prepare(lock, expect, cfg)
	if err != nil {
		t.Fatal(err)
	}
	clustertest.RequireDocker(t)
	for _, name := range slices.Sorted(maps.Keys(expect)) {
		t.Run(name, func(t *testing.T) {
			for _, seed := range cfg.seeds {
				t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
					res, err := runOne(t, name, scenarios.RunOptions{Seed: seed, Overrides: []scenarios.Override{scenarios.SetLock(lock), scenarios.SetExpect(expect[name])},
						Store: cfg.store, Driver: plan.driver, Locks: plan.locks, Log: t.Logf})
					if err != nil {
						t.Fatalf("lock %s on %s (seed %d): %v", lock, name, seed, err)
					}
					if msg := judge(res); msg != "" {
						t.Fatal(msg)
					}
					t.Logf("lock %s on %s (seed %d): %s as expected (%s); report: %s", lock, name, seed, res.Verdict, res.Expected, reportPath(res))
				})
			}
		})
	}
}

type plan struct {
	driver client.Command
	locks  locks.Catalogue
}

// prepare checks everything that can be checked before a container starts:
// Main's hook, the lock, each scenario with the lock and the expectation,
// and that the client processes (this binary as a driver) offer the lock.
func prepare(lock string, expect Expect, cfg config) (plan, error) {
	if err := preparedMain(lock); err != nil {
		return plan{}, err
	}
	if len(expect) == 0 {
		return plan{}, fmt.Errorf("dbtest: no scenario to run: Expect{\"failover-simple\": dbtest.Unsafe, ...} (deadbolt list names them)")
	}
	if len(cfg.seeds) == 0 {
		return plan{}, fmt.Errorf("dbtest: Seeds() needs at least one seed")
	}
	for name, want := range expect {
		s, err := scenarios.Get(name)
		if err == nil {
			_, err = s.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetLock(lock), scenarios.SetExpect(want)}})
		}
		if err != nil {
			return plan{}, fmt.Errorf("dbtest: %w", err)
		}
	}
	return clients(lock)
}

// preparedMain checks that Main ran and that the lock is registered.
func preparedMain(lock string) error {
	if !mainRan {
		return fmt.Errorf("dbtest: the test binary must serve as the client processes: add\n\n\tfunc TestMain(m *testing.M) { dbtest.Main(m) }\n\nto the package (registering the lock before dbtest.Main)")
	}
	if err := locks.Lookup(lock); err != nil {
		return fmt.Errorf("dbtest: %w: register it with dbtest.Register in TestMain or an init function", err)
	}
	return nil
}

// clients are the client processes, this test binary run as a driver,
// probed for the lock.
func clients(lock string) (plan, error) {
	cmd, err := driver()
	if err != nil {
		return plan{}, err
	}
	declared, err := client.Probe(cmd)
	if err != nil {
		return plan{}, fmt.Errorf("dbtest: run this test binary as a client process: %w", err)
	}
	if err := declared.Lookup(lock); err != nil {
		return plan{}, fmt.Errorf("dbtest: the client processes do not have lock %s (register it before dbtest.Main in TestMain, or in an init function, not in a test): %w", lock, err)
	}
	return plan{driver: cmd, locks: declared}, nil
}

// runOne runs one scenario under whileRunning's context.
func runOne(t *testing.T, name string, o scenarios.RunOptions) (*reports.Results, error) {
	s, err := scenarios.Get(name)
	if err != nil {
		return nil, err
	}
	var res *reports.Results
	err = whileRunning(t, name, func(ctx context.Context) error {
		var err error
		res, err = s.Run(ctx, o)
		return err
	})
	return res, err
}

// whileRunning runs f under a context that ends on SIGINT or SIGTERM (the
// signal is raised again once f has cleaned up) or 30 s before go test's
// -timeout.
func whileRunning(t *testing.T, name string, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if d, ok := t.Deadline(); ok {
		if time.Until(d) < cleanupMargin {
			return fmt.Errorf("go test's -timeout leaves %s, too little to run %s: raise -timeout", time.Until(d).Round(time.Second), name)
		}
		ctx, cancel = context.WithDeadline(ctx, d.Add(-cleanupMargin))
		defer cancel()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var got os.Signal
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case got = <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := f(ctx)
	cancel()
	<-done
	if got != nil {
		// The containers and clients are gone: die of the signal, as the
		// test binary would have without this run (or, where it was
		// ignored when the binary started, exit as interrupted anyway).
		fmt.Fprintf(os.Stderr, "dbtest: %v: %s stopped, its containers and client processes removed\n", got, name)
		signal.Stop(sigs)
		_ = syscall.Kill(os.Getpid(), got.(syscall.Signal))
		os.Exit(130)
	}
	if err == scenarios.ErrInterrupted && t.Context().Err() == nil {
		return fmt.Errorf("stopped %s before go test's -timeout, containers and clients removed: raise -timeout", cleanupMargin)
	}
	return err
}
