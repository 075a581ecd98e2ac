package explore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The reports show every part of an exploration: the summary, each finding
// with its file, write-up and replay line, the differences, the coverage
// table and every scenario's runs, each run linked to its report.html;
// explore.json reads back as it was written.
func TestTheReportsShowEveryPart(t *testing.T) {
	dir := t.TempDir()
	rep := &Report{Lock: "a", Against: "b", Seed: 3, Runs: 2, Dir: dir, Started: "2026-11-28T00:00:00Z", ExploreS: 61,
		Offer: Offer{Lock: "a", Places: []Place{{Topology: "independent", Masters: 1}}, Calls: []string{"extend"}},
		Scenarios: []Scenario{
			{Index: 0, File: "scenarios/s0.json", Aim: Aim{Family: "stall-holder", Call: "extend", Fault: "pause-client"},
				Runs: []Run{{Lock: "a", Verdict: "invalid", Dir: "s0/r1", Anomalies: map[string]int{"extend-not-held": 1}, Strikes: 1}, {Lock: "b", Verdict: "valid", Dir: "s0/r2", Strikes: 1}}},
			{Index: 1, File: "scenarios/s1.json", Aim: Aim{Family: "random", Fault: "kill"},
				Runs: []Run{{Lock: "a", Verdict: "unknown", Dir: "s1/r1"}, {Lock: "b", Verdict: "valid", Dir: "s1/r2"}}},
		}}
	judge(rep)
	rep.Coverage = []Coverage{{Family: "stall-holder", Fault: "pause-client", Call: "extend", Drawn: 1, Runs: 2, Struck: 2, Broke: 1}}
	rep.Findings[0].File = filepath.Join(dir, "findings", "s0-a.json")
	rep.Findings[0].Writeup = filepath.Join(dir, "findings", "s0-a.md")
	rep.Findings[0].Replay = "deadbolt run --file " + rep.Findings[0].File + " --lock a --seed 9"
	rep.Findings[0].Shrink = &Shrunk{Confirmed: true, Seeds: []uint64{9, 10, 11}, Runs: 12, Replays: map[string]string{"a": "invalid 3/3", "b": "valid 3/3"}}
	if err := writeReport(rep); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, MarkdownFile))
	page, _ := os.ReadFile(filepath.Join(dir, HTMLFile))
	for _, want := range []string{"a against b: 2 scenarios (4 runs)", "1 finding", "**extend-not-held** breaks `a`", "a invalid 3/3; b valid 3/3",
		"deadbolt run --file", "breaks a (extend-not-held 1), not b", "| extend | pause-client | stall-holder | 1 | 2 | 2 | 0 | 1 | 0 |", "`scenarios/s1.json`"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("explore.md lacks %q:\n%s", want, md)
		}
	}
	for _, want := range []string{"<h1>deadbolt explore: a against b</h1>", `href="s0/r1/report.html"`, `href="findings/s0-a.json"`, "write-up", "random moments"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("explore.html lacks %q", want)
		}
	}
	back, err := ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Findings) != 1 || back.Findings[0].Shrink.Runs != 12 || back.Unknown != 1 {
		t.Errorf("explore.json read back: %+v", back)
	}
}
