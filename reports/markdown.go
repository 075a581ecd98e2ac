package reports

import (
	"fmt"
	"strings"
	"time"
)

// Markdown renders report.md for one run.
func Markdown(r *Results) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (seed %d)\n\n%s\n\n", r.Scenario, r.Seed, r.Description)
	outcome := "matches"
	if !r.Matches {
		outcome = "does NOT match"
	}
	fmt.Fprintf(&b, "**Verdict: %s**, expected %s: the result %s the expectation.\n\n%s\n\n", r.Verdict, r.Expected, outcome, r.Reason)
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	for _, row := range [][2]string{
		{"lock", r.Lock}, {"topology", r.Topology}, {"nemesis", r.Nemesis},
		{"clients", fmt.Sprint(r.Clients)}, {"workload time", fmt.Sprintf("%.0fs", r.TimeS)},
		{"operations", fmt.Sprint(r.Ops)},
		{"acquires ok / fail / info", fmt.Sprintf("%d / %d / %d", r.Stats.AcquiresOK, r.Stats.AcquiresFail, r.Stats.AcquiresInfo)},
		{"releases ok / fail / info", fmt.Sprintf("%d / %d / %d", r.Stats.ReleasesOK, r.Stats.ReleasesFail, r.Stats.ReleasesInfo)},
		{"lease-lock model", r.Linearizable},
		{"double holds", fmt.Sprint(len(r.DoubleHolds))},
		{"final health check", r.Health},
		{"run took", fmt.Sprintf("%.1fs", r.DurationS)},
	} {
		fmt.Fprintf(&b, "| %s | %s |\n", row[0], row[1])
	}
	b.WriteString("\n## Faults\n\n")
	if len(r.FaultWindows) == 0 {
		b.WriteString("None.\n")
	}
	for _, w := range r.FaultWindows {
		healed := ""
		if !w.Healed {
			healed = " (never healed)"
		}
		fmt.Fprintf(&b, "- %s from %s to %s%s\n", w.Name(), Seconds(w.Start), Seconds(w.End), healed)
	}
	b.WriteString("\n## Double holds\n\n")
	if len(r.DoubleHolds) == 0 {
		b.WriteString("None.\n")
	} else {
		b.WriteString("| key | first holder | second holder | overlap | faults |\n|---|---|---|---|---|\n")
		for _, d := range r.DoubleHolds {
			fmt.Fprintf(&b, "| %s | process %d, %s to %s | process %d, %s to %s | %s to %s (%s) | %s |\n",
				d.Key,
				d.First.Process, Seconds(d.First.AcquiredAt), Seconds(d.First.Until),
				d.Second.Process, Seconds(d.Second.AcquiredAt), Seconds(d.Second.Until),
				Seconds(d.OverlapStart), Seconds(d.OverlapEnd), time.Duration(d.OverlapEnd-d.OverlapStart).Round(time.Millisecond),
				strings.Join(d.Faults, ", "))
		}
	}
	if len(r.Anomalies) > 0 {
		b.WriteString("\n## Anomalies\n\n")
		for _, a := range r.Anomalies {
			fmt.Fprintf(&b, "- %s\n", a)
		}
	}
	fmt.Fprintf(&b, "\nFiles: `history.jsonl` (every operation), `results.json`, `%s` (porcupine's view of the lease-lock check), `<node>.log`.\n", ModelFile)
	fmt.Fprintf(&b, "\nRe-check: `deadbolt check %s`. Re-run: `deadbolt run %s --seed %d`.\n", r.Dir, r.Scenario, r.Seed)
	return b.String()
}

// Seconds formats a history time (ns since the run started) as t+S.SSSs.
func Seconds(ns int64) string { return fmt.Sprintf("t+%.3fs", float64(ns)/1e9) }
