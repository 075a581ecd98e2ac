package explore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// Each stronger version is a scenario file Prepare takes: the steps struck
// three times, a round after the last healed and a lease ran out, with the
// fault phase grown to hold them; sizes doubled only where a step has one.
func TestAmplifiedStrikesMoreAndLarger(t *testing.T) {
	s := big()
	s.Fault.Steps = []nemesis.Step{{Fault: "link-delay", Target: "link:0:primary", WaitKey: "k0", By: 250 * time.Millisecond, For: 2 * time.Second}}
	as := Amplified(s)
	var changes []string
	for _, a := range as {
		changes = append(changes, a.Change)
		if _, err := a.Scenario.Prepare(scenarios.RunOptions{}); err != nil {
			t.Errorf("%s: %v", a.Change, err)
		}
	}
	if !slices.Equal(changes, []string{"the faults struck 3 times", "the faults twice as large", "the faults struck 3 times, twice as large"}) {
		t.Fatalf("changes %q", changes)
	}
	repeated, larger, both := as[0].Scenario, as[1].Scenario, as[2].Scenario
	if len(repeated.Fault.Steps) != 3 || repeated.Fault.Steps[1].After != 3*time.Second || repeated.Fault.Steps[2].By != 250*time.Millisecond {
		t.Errorf("repeated steps %+v", repeated.Fault.Steps)
	}
	if repeated.Time.D() != s.Time.D()+2*(2*time.Second+3*time.Second) {
		t.Errorf("repeated time %s", repeated.Time)
	}
	if len(larger.Fault.Steps) != 1 || larger.Fault.Steps[0].By != 500*time.Millisecond || larger.Time != s.Time {
		t.Errorf("larger %+v, %s", larger.Fault.Steps, larger.Time)
	}
	if len(both.Fault.Steps) != 3 || both.Fault.Steps[2].By != 500*time.Millisecond {
		t.Errorf("both %+v", both.Fault.Steps)
	}
	if s.Fault.Steps[0].By != 250*time.Millisecond || len(s.Fault.Steps) != 1 {
		t.Errorf("the original changed: %+v", s.Fault.Steps)
	}
	// Nothing to make larger: only the repeat. No plan: nothing.
	s.Fault.Steps[0].By = 0
	s.Fault.Steps[0].Fault = "pause-node"
	if as := Amplified(s); len(as) != 1 {
		t.Errorf("%d stronger versions of a step without a size", len(as))
	}
	s.Nemesis, s.Fault.Steps = "none", nil
	if as := Amplified(s); len(as) != 0 {
		t.Errorf("%d stronger versions of no plan", len(as))
	}
}

// A finding that breaks the lock on one seed only until its faults strike
// three times is confirmed with them struck three times, and the shrink
// keeps what it needs of that.
func TestAFlakyBreakIsConfirmedStronger(t *testing.T) {
	g := Generated{Index: 0, Scenario: big(), Seed: 11}
	g.Scenario.Fault.Steps = g.Scenario.Fault.Steps[1:2] // the holder's pause
	x := &explorer{o: Options{Parallel: 2, ShrinkRuns: 200, Seeds: 3}}
	x.run = func(_ context.Context, s scenarios.Scenario, lock string, seed uint64) Run {
		pauses := 0
		for _, st := range s.Fault.Steps {
			if st.Fault == "pause-client" {
				pauses++
			}
		}
		if lock == "reentrant" && (pauses >= 3 || seed == g.Seed) {
			return Run{Lock: lock, Seed: seed, Verdict: "invalid"}
		}
		return Run{Lock: lock, Seed: seed, Verdict: "valid"}
	}
	sh, best, _ := x.shrink(context.Background(), &Finding{Lock: "reentrant", Against: "reentrant-lease"}, g)
	if !sh.Confirmed || sh.Amplified != "the faults struck 3 times" {
		t.Fatalf("not confirmed stronger: %+v", sh)
	}
	if len(best.Fault.Steps) != 3 || sh.Replays["reentrant"] != "invalid 3/3" || sh.Replays["reentrant-lease"] != "valid 3/3" {
		t.Errorf("kept %d steps, replays %v", len(best.Fault.Steps), sh.Replays)
	}
	if sh.Trials[1].Change != "the faults struck 3 times" || !sh.Trials[1].Kept {
		t.Errorf("trials %+v", sh.Trials[:2])
	}
	if n := candidates(sh); n != len(sh.Trials)-2 {
		t.Errorf("%d candidates of %d trials: the generated scenario and its stronger version are none", n, len(sh.Trials))
	}
}
