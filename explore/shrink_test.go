package explore

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// big is a scenario with room to shrink everywhere: three steps, a
// majority target, four clients on two keys, a counter with re-entry, a
// raised timeout and a long fault phase.
func big() scenarios.Scenario {
	s := scenarios.Scenario{Name: "big", Expect: scenarios.Unknown, Lock: "reentrant", Workload: "counter", Reenter: true,
		Nemesis: "plan", Time: scenarios.Duration(40 * time.Second)}
	s.Cluster.Topology, s.Cluster.Masters = "independent", 1
	s.Clients, s.Keys = 4, []string{"k0", "k1"}
	s.TTL, s.HoldMin, s.HoldMax, s.Pause = scenarios.Duration(time.Second), scenarios.Duration(50*time.Millisecond), scenarios.Duration(800*time.Millisecond), scenarios.Duration(20*time.Millisecond)
	s.LockOptions.TimeoutMS = 2000
	s.Fault.Steps = []nemesis.Step{
		{Fault: "pause-node", Target: "node:redis-1", After: time.Second, For: 2 * time.Second},
		{Fault: "pause-client", Target: "holder", Key: "k0", After: 3 * time.Second, For: 4 * time.Second, Until: nemesis.UntilHandoff},
		{Fault: "kill-connections", Target: "node:redis-1", After: 2 * time.Second},
	}
	return s
}

// Every candidate is a scenario file Prepare takes, simpler than the one
// it came from in one respect.
func TestCandidatesAreSimplerScenarioFiles(t *testing.T) {
	s := big()
	if _, err := s.Prepare(scenarios.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	var changes []string
	stream := Candidates(s)
	for v, ok := stream(); ok; v, ok = stream() {
		c := v.(scenarios.Scenario)
		if _, err := c.Prepare(scenarios.RunOptions{}); err != nil {
			t.Errorf("candidate %s: %v", changed(s, c), err)
		}
		ch := changed(s, c)
		if ch == "no change" {
			t.Errorf("a candidate that changes nothing")
		}
		changes = append(changes, ch)
	}
	for _, want := range []string{"3 steps -> 2", "clients 4 -> 2", `keys ["k0","k1"] -> ["k0"]`, "reenter true -> none", `workload "counter" -> "mutex"`,
		`lock_options {"timeout_ms":"2s"} -> {}`, `step 2 until "handoff" -> none`, "time", "step 2 for 4s -> 2s", "step 1 after 1s -> none", `hold_max "800ms" -> "400ms"`} {
		if !slices.ContainsFunc(changes, func(c string) bool { return len(c) >= len(want) && contains(c, want) }) {
			t.Errorf("no candidate %q among %q", want, changes)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// The search keeps each candidate that still breaks the lock on every seed
// and leaves the second lock unbroken, and stops at the budget: here the
// lock breaks while a holder's pause of at least 2s is in the plan and
// any client is left, so the pause survives, shortened to 2s, and little
// else does.
func TestShrinkKeepsWhatStillBreaksWithinItsBudget(t *testing.T) {
	breaks := func(s scenarios.Scenario) bool {
		return slices.ContainsFunc(s.Fault.Steps, func(st nemesis.Step) bool { return st.Fault == "pause-client" && st.For >= 2*time.Second })
	}
	runs := 0
	x := &explorer{o: Options{Parallel: 2, ShrinkRuns: 200, Seeds: 3}}
	x.run = func(_ context.Context, s scenarios.Scenario, lock string, seed uint64) Run {
		runs++
		v := "valid"
		if lock == "reentrant" && breaks(s) {
			v = "invalid"
		}
		return Run{Lock: lock, Seed: seed, Verdict: v}
	}
	f := &Finding{Lock: "reentrant", Against: "reentrant-lease"}
	g := Generated{Index: 0, Scenario: big(), Seed: 11}
	sh, best, _ := x.shrink(context.Background(), f, g)
	if !sh.Confirmed {
		t.Fatalf("not confirmed: %+v", sh)
	}
	if sh.Runs != runs {
		t.Errorf("counted %d runs, made %d", sh.Runs, runs)
	}
	if len(best.Fault.Steps) != 1 || best.Fault.Steps[0].Fault != "pause-client" || best.Fault.Steps[0].For != 2*time.Second {
		t.Errorf("steps %+v", best.Fault.Steps)
	}
	if best.Clients != 2 || len(best.Keys) != 1 || best.Reenter || best.Workload != "mutex" || best.LockOptions.TimeoutMS != 0 {
		t.Errorf("shrunk to %+v", best)
	}
	if sh.Replays["reentrant"] != "invalid 3/3" || sh.Replays["reentrant-lease"] != "valid 3/3" {
		t.Errorf("replays %v", sh.Replays)
	}
	// A budget of one candidate: the confirmation and one trial.
	x.o.ShrinkRuns = 12
	sh, best, _ = x.shrink(context.Background(), f, g)
	if len(sh.Trials) != 2 || sh.Runs > 12 || len(best.Fault.Steps) != 2 {
		t.Errorf("budget 12: %d trials, %d runs, %d steps", len(sh.Trials), sh.Runs, len(best.Fault.Steps))
	}
	// A scenario that breaks the lock on its own seed only, however strong,
	// is tried stronger, then not shrunk.
	x.run = func(_ context.Context, s scenarios.Scenario, lock string, seed uint64) Run {
		if lock == "reentrant" && seed == g.Seed {
			return Run{Lock: lock, Seed: seed, Verdict: "invalid"}
		}
		return Run{Lock: lock, Seed: seed, Verdict: "valid"}
	}
	sh, _, _ = x.shrink(context.Background(), f, g)
	if sh.Confirmed || sh.Amplified != "" || len(sh.Trials) != 1+len(Amplified(g.Scenario)) {
		t.Errorf("a flaky break was confirmed, or not tried stronger: %+v", sh)
	}
}

// A finding that does not break the lock on every seed is passed over for
// the next, which is shrunk and written with its draft write-up.
func TestAnUnconfirmedFindingIsPassedOverForTheNext(t *testing.T) {
	dir := t.TempDir()
	x := &explorer{o: Options{Parallel: 2, ShrinkRuns: 12, Seeds: 3, Shrink: 1, Dir: dir}}
	x.run = func(_ context.Context, s scenarios.Scenario, lock string, seed uint64) Run {
		v := "valid"
		switch {
		case lock == "reentrant" && s.Name == "flaky" && seed == 5:
			v = "invalid"
		case lock == "reentrant" && s.Name == "sure":
			v = "invalid"
		}
		return Run{Lock: lock, Seed: seed, Verdict: v, Dir: "run"}
	}
	flaky, sure := big(), big()
	flaky.Name, sure.Name = "flaky", "sure"
	gens := []Generated{{Index: 0, Scenario: flaky, Seed: 5}, {Index: 1, Scenario: sure, Seed: 6}}
	rep := &Report{Lock: "reentrant", Against: "reentrant-lease", Scenarios: []Scenario{{Index: 0, Seed: 5, File: "scenarios/flaky.json"}, {Index: 1, Seed: 6, File: "scenarios/sure.json"}},
		Findings: []Finding{{Lock: "reentrant", Against: "reentrant-lease", Scenario: 0, File: "scenarios/flaky.json"}, {Lock: "reentrant", Against: "reentrant-lease", Scenario: 1, File: "scenarios/sure.json"}}}
	if err := x.shrinkFindings(context.Background(), gens, rep); err != nil {
		t.Fatal(err)
	}
	first, second := rep.Findings[0], rep.Findings[1]
	if first.Shrink == nil || first.Shrink.Confirmed || first.Writeup != "" {
		t.Errorf("the flaky finding: %+v", first.Shrink)
	}
	if second.Shrink == nil || !second.Shrink.Confirmed || second.Writeup == "" {
		t.Fatalf("the sure finding was not shrunk: %+v", second.Shrink)
	}
	if _, err := os.Stat(second.File); err != nil {
		t.Errorf("its file: %v", err)
	}
	b, err := os.ReadFile(second.Writeup)
	if err != nil || !strings.Contains(string(b), "deadbolt run --file") {
		t.Errorf("its write-up has no replay line: %v\n%s", err, b)
	}
}

// A length whose half is below its least goes to the least first, not by
// ever smaller cuts toward it; a cut of under a twentieth is no candidate.
func TestHalvingGoesToTheFloorFirst(t *testing.T) {
	lengths := func(d, least time.Duration, n int) []time.Duration {
		var out []time.Duration
		stream := halving(d, least, n, func(x time.Duration) scenarios.Scenario {
			return scenarios.Scenario{Time: scenarios.Duration(x)}
		})
		for v, ok := stream(); ok; v, ok = stream() {
			out = append(out, v.(scenarios.Scenario).Time.D())
		}
		return out
	}
	if got := lengths(9*time.Second, 8*time.Second, 2); len(got) == 0 || got[0] != 8*time.Second || len(got) > 2 {
		t.Errorf("9s toward 8s: %v", got)
	}
	if got := lengths(4*time.Second, 100*time.Millisecond, 2); len(got) != 2 || got[0] != 2*time.Second {
		t.Errorf("4s toward 100ms: %v", got)
	}
	for _, x := range lengths(8400*time.Millisecond, 8*time.Second, 2) {
		t.Errorf("a cut of under a twentieth: 8.4s -> %s", x)
	}
}

// A change that did not break the lock is not tried again while the
// faults stay as they were (the same shorter pause on a scenario with
// shorter holds).
func TestAFailedChangeIsNotTriedAgain(t *testing.T) {
	s := big()
	s.Fault.Steps = []nemesis.Step{{Fault: "pause-client", Target: "holder", Key: "k0", For: 2 * time.Second}}
	x := &explorer{o: Options{Parallel: 2, ShrinkRuns: 500, Seeds: 3}}
	x.run = func(_ context.Context, s scenarios.Scenario, lock string, seed uint64) Run {
		v := "valid"
		if lock == "reentrant" && slices.ContainsFunc(s.Fault.Steps, func(st nemesis.Step) bool { return st.Fault == "pause-client" && st.For >= 2*time.Second }) {
			v = "invalid"
		}
		return Run{Lock: lock, Seed: seed, Verdict: v}
	}
	sh, _, _ := x.shrink(context.Background(), &Finding{Lock: "reentrant"}, Generated{Scenario: s, Seed: 11})
	seen := map[string]int{}
	for _, tr := range sh.Trials {
		if !tr.Kept && strings.Contains(tr.Change, "for 2s -> ") {
			seen[tr.Change]++
		}
	}
	if len(seen) == 0 {
		t.Fatalf("the pause was never tried shorter: %+v", sh.Trials)
	}
	for change, n := range seen {
		if n > 1 {
			t.Errorf("%q tried %d times", change, n)
		}
	}
}

// With a second lock, the findings that break the lock explored are tried
// first: one that breaks only the second lock does not spend a try ahead
// of them.
func TestFindingsOfTheLockExploredAreTriedFirst(t *testing.T) {
	rep := &Report{Lock: "a", Against: "f", Findings: []Finding{{Lock: "f"}, {Lock: "a"}, {Lock: "f"}, {Lock: "a"}}}
	if got := lockFirst(rep); !slices.Equal(got, []int{1, 3, 0, 2}) {
		t.Errorf("order %v", got)
	}
}
