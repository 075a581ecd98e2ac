package explore

import (
	"strings"
	"testing"
)

func run(lock, verdict string, strikes int, anomalies map[string]int) Run {
	return Run{Lock: lock, Verdict: verdict, Strikes: strikes, Anomalies: anomalies}
}

func scenario(i int, family, call string, runs ...Run) Scenario {
	return Scenario{Index: i, File: "scenarios/s.json", Aim: Aim{Family: family, Call: call, Fault: "pause-client"}, Runs: runs}
}

// What breaks the lock and not the second lock is a finding, and so is the
// reverse (listed after); runs that both broke, both passed, or where one
// reached no verdict are not.
func TestJudgeFindsWhatBreaksOneLockAndNotTheOther(t *testing.T) {
	rep := &Report{Lock: "a", Against: "b", Scenarios: []Scenario{
		scenario(0, "stall-holder", "extend", run("a", "valid", 1, nil), run("b", "invalid", 1, map[string]int{"double-hold": 1})),
		scenario(1, "stall-holder", "extend", run("a", "invalid", 1, map[string]int{"extend-not-held": 2}), run("b", "valid", 1, nil)),
		scenario(2, "slow-replies", "extend", run("a", "invalid", 2, map[string]int{"lost-update": 1}), run("b", "unknown", 2, nil)),
		scenario(3, "slow-replies", "extend", run("a", "valid", 2, nil), run("b", "valid", 2, nil)),
		scenario(4, "stall-holder", "extend", run("a", "invalid", 1, map[string]int{"extend-not-held": 1}), run("b", "valid", 1, nil)),
	}}
	judge(rep)
	if len(rep.Findings) != 2 {
		t.Fatalf("findings %+v", rep.Findings)
	}
	first, second := rep.Findings[0], rep.Findings[1]
	if first.Lock != "a" || first.Against != "b" || first.Anomaly != "extend-not-held" || first.Scenario != 1 {
		t.Errorf("first finding %+v", first)
	}
	if len(first.Like) != 1 || first.Like[0] != 4 {
		t.Errorf("run 4 broke a the same way as run 1: like %v", first.Like)
	}
	if second.Lock != "b" || second.Against != "a" || second.Anomaly != "double-hold" {
		t.Errorf("second finding %+v", second)
	}
	if len(rep.Differences) != 3 {
		t.Errorf("differences %+v", rep.Differences)
	}
	if rep.Unknown != 1 || rep.Undecided {
		t.Errorf("unknown %d undecided %v", rep.Unknown, rep.Undecided)
	}
}

// Where both break, they differ when one shows a kind the other does not,
// or the same kind at least twice as often per strike; the same kinds at
// like rates are no difference.
func TestBothBrokenDifferByKindOrRatePerStrike(t *testing.T) {
	rep := &Report{Lock: "a", Against: "b", Scenarios: []Scenario{
		scenario(0, "f", "c", run("a", "invalid", 2, map[string]int{"double-hold": 6}), run("b", "invalid", 2, map[string]int{"double-hold": 2})),
		scenario(1, "f", "c", run("a", "invalid", 2, map[string]int{"double-hold": 2}), run("b", "invalid", 2, map[string]int{"double-hold": 3})),
		scenario(2, "f", "c", run("a", "invalid", 1, map[string]int{"double-hold": 1, "release-not-held": 1}), run("b", "invalid", 1, map[string]int{"double-hold": 1})),
	}}
	judge(rep)
	if len(rep.Findings) != 0 {
		t.Fatalf("both broke each time, yet findings %+v", rep.Findings)
	}
	if len(rep.Differences) != 2 || rep.Differences[0].Scenario != 0 || rep.Differences[1].Scenario != 2 {
		t.Fatalf("differences %+v", rep.Differences)
	}
	if !strings.Contains(rep.Differences[0].How, "double-hold 3 per strike in a (6 in 2), 1 in b (2 in 2)") {
		t.Errorf("how: %s", rep.Differences[0].How)
	}
	if !strings.Contains(rep.Differences[1].How, "release-not-held only in a") {
		t.Errorf("how: %s", rep.Differences[1].How)
	}
}

// Without a second lock every broken run is a finding, grouped by how it
// broke; more runs without a verdict than with one leave the exploration
// undecided.
func TestWithoutASecondLockEveryBreakIsAFindingAndUnknownsCount(t *testing.T) {
	rep := &Report{Lock: "a", Scenarios: []Scenario{
		scenario(0, "f", "c", run("a", "invalid", 1, map[string]int{"double-hold": 1})),
		scenario(1, "f", "c", run("a", "unknown", 0, nil)),
		scenario(2, "f", "c", run("a", "error", 0, nil)),
	}}
	judge(rep)
	if len(rep.Findings) != 1 || rep.Findings[0].Against != "" {
		t.Fatalf("findings %+v", rep.Findings)
	}
	if !rep.Undecided || rep.Unknown != 2 {
		t.Errorf("2 of 3 runs without a verdict: undecided %v, unknown %d", rep.Undecided, rep.Unknown)
	}
}
