package explore

import (
	"strings"
	"testing"
	"time"

	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// Every call column draws, for a lock that renews its leases, a scenario
// Prepare takes, aimed at that call; a lock with no call on a held lease
// has no cell there, and says why; every version of a library gets the
// same scenario (the draw is seeded by the column).
func TestCallColumnsDrawForTheLocksCall(t *testing.T) {
	for _, f := range CallFailures() {
		s, err := f.Draw("reentrant", scenarios.RunOptions{})
		if f.Name == "call-interrupted" {
			if err == nil || !strings.Contains(err.Error(), "watchdog's renewal is the lock's own") {
				t.Errorf("%s on a watchdog's renewals: %v", f.Name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if _, err := s.Prepare(scenarios.RunOptions{}); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
		again, _ := f.Draw("reentrant", scenarios.RunOptions{})
		if key(again) != key(s) {
			t.Errorf("%s drew two scenarios for one lock", f.Name)
		}
		if _, err := f.Draw("reentrant-lease", scenarios.RunOptions{}); err == nil || !strings.Contains(err.Error(), "makes no call on a held lease") {
			t.Errorf("%s for reentrant-lease: %v", f.Name, err)
		}
	}
}

// A pause until the handoff, on a lock whose holds last several TTLs,
// leaves room in the fault phase for what it waits on: the next grant
// after its delay (a hold away), its own length, a grant within that
// length held a whole hold, and the handoff a lease after it. (The
// audit's call-stalled cell on rueidislock missed its handoff on every
// version with a 7 s phase and 3-4 s holds.)
func TestAPauseUntilTheHandoffHasTimeForIt(t *testing.T) {
	for _, f := range CallFailures() {
		if f.Name != "call-stalled" {
			continue
		}
		s, err := f.Draw("reentrant", scenarios.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st := s.Fault.Steps[0]
		if st.Until != nemesis.UntilHandoff || st.After == 0 {
			t.Fatalf("call-stalled drew %+v", st)
		}
		ttl, hold := s.TTL.D(), s.HoldMax.D()
		need := st.After + hold + time.Duration(st.TTLs)*ttl + hold + ttl
		if s.Time.D() < need {
			t.Errorf("a %s fault phase for a pause until the handoff that may need %s (holds up to %s, TTL %s)", s.Time.D(), need, hold, ttl)
		}
	}
}

// A column that strikes several times says so in its declaration: the
// closed connections strike three times, a TTL apart.
func TestAColumnStrikesAsOftenAsItDeclares(t *testing.T) {
	for _, c := range callColumns {
		s, err := c.draw("reentrant", scenarios.RunOptions{})
		if err != nil {
			continue // no such call (call-interrupted on a watchdog)
		}
		want := max(c.strikes, 1)
		if got := len(s.Fault.Steps); got != want {
			t.Errorf("%s: %d steps, declared %d strikes", c.name, got, want)
		}
		for _, st := range s.Fault.Steps[1:] {
			if st.After != s.TTL.D() || st.Fault != s.Fault.Steps[0].Fault {
				t.Errorf("%s: a later strike %+v", c.name, st)
			}
		}
	}
}

// A kill aimed at a held lease must complete while the lease is held: the
// audit saw one take 1.4 s on a loaded machine (gozero v1.10.3's cell
// missed with a 1 s lease), so the column's lease outlasts twice that.
func TestAKillOfTheMasterStrikesWithinTheLease(t *testing.T) {
	const slowestKill = 1400 * time.Millisecond
	for _, c := range callColumns {
		s, err := c.draw("reentrant", scenarios.RunOptions{})
		if err != nil || s.Fault.Steps[0].Fault != "kill" {
			continue
		}
		if s.TTL.D() < 2*slowestKill {
			t.Errorf("%s: a kill aimed at a lease of %s", c.name, s.TTL.D())
		}
		if s.HoldMax.D() < s.HoldMin.D() || s.Time.D() < s.Fault.Steps[0].For+s.TTL.D() {
			t.Errorf("%s: holds %s-%s and a phase of %s for a lease of %s", c.name, s.HoldMin.D(), s.HoldMax.D(), s.Time.D(), s.TTL.D())
		}
	}
}
