package reports

import (
	"fmt"
	"sort"
	"strings"

	"github.com/deadbolt-lab/deadbolt/checker"
)

// anomaliesPerKind bounds each kind's list in report.md; results.json has them all.
const anomaliesPerKind = 20

// Markdown renders report.md for one run.
func Markdown(r *Results) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (seed %d)\n\n%s\n\n", r.Scenario, r.Seed, r.Description)
	if r.Precondition != "" {
		fmt.Fprintf(&b, "Precondition (proved from the history): %s.\n\n", r.Precondition)
	}
	fmt.Fprintf(&b, "**Verdict: %s**, expected %s: %s.\n\n%s\n\n", r.Verdict, r.Expected, outcomeWords(r), r.Reason)
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	rows := [][2]string{
		{"lock", LockText(r)}, {"server", orNone(r.Server.String())}, {"topology", r.Topology}, {"workload", r.Workload}, {"nemesis", r.Nemesis},
		{"client processes", fmt.Sprint(r.Clients)}, {"workload time", fmt.Sprintf("%.0fs", r.TimeS)},
		{"phases", orNone(checker.PhasesText(r.Phases))},
		{"operations", fmt.Sprint(r.Ops)},
		{"acquires ok / fail / info", fmt.Sprintf("%d / %d / %d", r.Stats.AcquiresOK, r.Stats.AcquiresFail, r.Stats.AcquiresInfo)},
		{"releases ok / fail / info", fmt.Sprintf("%d / %d / %d", r.Stats.ReleasesOK, r.Stats.ReleasesFail, r.Stats.ReleasesInfo)},
		{"renewals (ok)", fmt.Sprintf("%d (%d)", r.Stats.Renewals, r.Stats.RenewalsOK)},
		{"leases granted after their TTL", fmt.Sprint(r.Stats.ExpiredOnArrival)},
		{"longest stretch without a grant", NoGrant(r)},
		{"resource reads / writes / orders ok", fmt.Sprintf("%d / %d / %d", r.Stats.ReadsOK, r.Stats.WritesOK, r.Stats.OrdersOK)},
		{"damage", Damage(r)},
		{"final health check", r.Health},
		{"run took", fmt.Sprintf("%.1fs", r.DurationS)},
	}
	if st := Strikes(r); st != "" {
		rows = append(rows, [2]string{"strikes inside operations", st})
	}
	for _, row := range rows {
		fmt.Fprintf(&b, "| %s | %s |\n", row[0], row[1])
	}
	b.WriteString("\n## Checks\n\n| checker | verdict | reason | metrics |\n|---|---|---|---|\n")
	for _, c := range r.Checks {
		v := string(c.Verdict)
		if !c.Applicable {
			v = "not applicable"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.Checker, v, c.Reason, metrics(c.Metrics))
	}
	b.WriteString("\n## Faults\n\n")
	if len(r.FaultWindows) == 0 {
		b.WriteString("None.\n")
	}
	for _, w := range r.FaultWindows {
		fmt.Fprintf(&b, "- %s: %s\n", w.Name(), w.Span(Seconds))
	}
	for _, o := range r.Observed {
		fmt.Fprintf(&b, "- at %s %s\n", Seconds(o.At), o.Text())
	}
	b.WriteString("\n## Anomalies\n\n")
	if len(r.Anomalies) == 0 {
		b.WriteString("None.\n")
	}
	shown := map[string]int{}
	for _, a := range r.Anomalies {
		shown[a.Kind]++
		if n := shown[a.Kind]; n <= anomaliesPerKind {
			fmt.Fprintf(&b, "- %s at %s: %s\n", a.Kind, Seconds(a.At), a.Text)
		}
	}
	for _, k := range sortedKeys(shown) {
		if n := shown[k]; n > anomaliesPerKind {
			fmt.Fprintf(&b, "- ... and %s (all in results.json)\n", checker.Plural(n-anomaliesPerKind, "more "+k+" anomaly"))
		}
	}
	fmt.Fprintf(&b, "\nFiles: `%s` (this report with a timeline and plots), `scenario.json` (the run's full description), `history.jsonl` (every operation), `results.json`, `%s` (porcupine's view of the lease-lock check), `<node>.log`, `clients/p<N>.log` (each client process's log).\n", HTMLFile, ModelFile)
	fmt.Fprintf(&b, "\nRe-check: `deadbolt check %s`. Re-render: `deadbolt report %s`. Re-run: `%s`.\n", ShellQuote(r.Dir), ShellQuote(r.Dir), RerunCommand(r))
	return b.String()
}

func metrics(m map[string]int64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Seconds formats a history time (ns since the run started) as t+S.SSSs.
func Seconds(ns int64) string { return fmt.Sprintf("t+%.3fs", float64(ns)/1e9) }

// NoGrant says how long the lock went without granting one key, and when.
func NoGrant(r *Results) string {
	if r.Stats.LongestNoGrantOn == "" {
		return "-"
	}
	return fmt.Sprintf("%.1fs on key %q from t+%.3fs", float64(r.Stats.LongestNoGrantMS)/1000, r.Stats.LongestNoGrantOn, float64(r.Stats.LongestNoGrantAt)/1e9)
}

// Strikes sums up the faults struck inside client operations, "" without
// any: how many landed inside, hit, and took effect late or left the key
// stuck (checker/strikes.go).
func Strikes(r *Results) string {
	st := r.Stats
	if st.Strikes == 0 {
		return ""
	}
	return fmt.Sprintf("%d (%d inside, %d hit, %d late, %d stuck)", st.Strikes, st.StrikesInside, st.StrikesHit, st.StrikesLate, st.StrikesStuck)
}

// orNone is s, or "none" when empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
