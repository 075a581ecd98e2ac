package workloads

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/workloads/moment"
)

// TestLockOrderRunnerThenSession races the two paths that once took the
// runner's and a session's mutexes in opposite order: a renewal event
// giving a lease its watchdog process (Session.watchdog: the session's,
// then the runner's, through track) and a fault looking up its target
// (Runner.Client and Runner.Quiet: the runner's, then each session's).
// With the order inverted they deadlock within a few thousand rounds; the
// test then fails at its deadline instead of hanging.
func TestLockOrderRunnerThenSession(t *testing.T) {
	r := &Runner{byProc: map[int]*client.Process{}, stops: map[int]chan moment.Stop{}, gates: newGates(), latencies: latencies{}}
	s := &Session{r: r, leases: map[string]*Lease{}}
	r.slots = []*Session{s}
	const rounds = 20000
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the event goroutine's renewals
		defer wg.Done()
		for range rounds {
			s.watchdog(&Lease{watchdog: -1}, true)
		}
	}()
	go func() { // a fault resolving its target
		defer wg.Done()
		ctx := context.Background()
		for range rounds {
			_, _, _ = r.Client(0)
			_ = r.Quiet(ctx, nil)
		}
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Session.watchdog and Runner.Client/Quiet deadlocked: the runner's mutex must be taken before a session's, never after")
	}
	if got := int(r.processes.Load()); got != rounds {
		t.Fatalf("%d watchdog processes allocated, want %d", got, rounds)
	}
}
