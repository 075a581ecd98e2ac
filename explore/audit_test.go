package explore

import (
	"strings"
	"testing"

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
