package workloads

import (
	"testing"
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
)

// The runner's lock is taken before a session's (Runner.Client,
// Runner.Quiet), never after. Session.watchdog once took the runner's lock
// under the session's (commit c13007c), and a renewal racing a fault's
// target lookup could deadlock. This test stages that race without Docker:
// it holds the runner's lock, as Runner.Client does, while a renewal
// allocates its watchdog process, then takes the session's lock. Under the
// broken order the renewal holds the session's lock while it waits for the
// runner's, and the test's wait for the session's lock runs out.
func TestARenewalNeverHoldsTheSessionLockWhileWaitingForTheRunners(t *testing.T) {
	r := &Runner{cfg: Config{Clients: 1}, byProc: map[int]*client.Process{}, gates: newGates()}
	proc := &client.Process{}
	s := &Session{r: r, proc: proc, leases: map[string]*Lease{}}
	r.slots = []*Session{s}
	l := &Lease{ID: "l1", watchdog: -1}

	r.mu.Lock() // the fault's target lookup, as in Runner.Client
	before := r.processes.Load()
	renewed := make(chan int)
	go func() { renewed <- s.watchdog(l, true) }()

	// Wait until the renewal has its new process id: it took that under
	// the session's lock and now needs the runner's, to track it.
	waitFor(t, 10*time.Second, "the renewal to allocate its watchdog", func() bool { return r.processes.Load() > before })

	gotSession := make(chan struct{})
	go func() {
		s.mu.Lock() // the lookup goes on to the slot's session
		s.mu.Unlock()
		close(gotSession)
	}()
	select {
	case <-gotSession:
	case <-time.After(10 * time.Second):
		r.mu.Unlock() // lets the renewal finish, so the goroutines end
		<-renewed
		t.Fatal("lock-order inversion: a renewal holds the session's lock while it waits for the runner's (deadlock)")
	}
	r.mu.Unlock()
	id := <-renewed
	if id != int(before) {
		t.Errorf("watchdog process %d, want %d", id, before)
	}
	if got := r.Process(id); got != proc {
		t.Errorf("watchdog process %d is not tracked to the session's OS process", id)
	}
}

// waitFor polls cond until it holds, failing the test after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s waiting for %s", limit, what)
		}
		time.Sleep(time.Millisecond)
	}
}
