package reports

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
)

// Table writes the comparison of several runs, one row each, and says for
// each whether its verdict matched its expectation.
func Table(w io.Writer, rs []*Results) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tLOCK\tWORKLOAD\tNEMESIS\tSEED\tACQUIRES\tDOUBLE HOLDS\tDAMAGE\tEXPECTED\tVERDICT\tRESULT")
	for _, r := range rs {
		result := r.Outcome()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n",
			r.Scenario, r.Lock, r.Workload, r.Nemesis, r.Seed, r.Stats.AcquiresOK,
			r.Metric("double_holds"), Damage(r), r.Expected, r.Verdict, result)
	}
	return tw.Flush()
}

// Damage sums up, in a few words, what the resource and the lock's users
// suffered: lost updates, rejected stale writes, duplicate orders, waiters
// passed in a fair lock's line, keys stuck taken. "-" when a run had nothing to show.
func Damage(r *Results) string {
	var parts []string
	add := func(metric, one, many string) {
		if n := r.Metric(metric); n > 0 {
			parts = append(parts, checker.PluralAs(n, one, many))
		}
	}
	add("lost_updates", "lost update", "lost updates")
	add("stale_writes_rejected", "stale write rejected", "stale writes rejected")
	add("duplicate_orders", "duplicate order", "duplicate orders")
	add("oversold_units", "unit oversold", "units oversold")
	add("queue_jumps", "queue jump", "queue jumps")
	if n := r.Metric("liveness_failures"); n > 0 {
		parts = append(parts, fmt.Sprintf("stuck %s", time.Duration(r.Metric("unavailable_ms"))*time.Millisecond))
	}
	for _, c := range r.Checks {
		if c.Damage != "" {
			parts = append(parts, c.Damage)
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// FirstOfEach is one line of evidence per anomaly kind, in the order the
// kinds first appear, at most n of them.
func FirstOfEach(r *Results, n int) []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range r.Anomalies {
		if seen[a.Kind] || len(out) == n {
			continue
		}
		seen[a.Kind] = true
		line := fmt.Sprintf("first %s: %s", a.Kind, a.Text)
		if a.Kind == checker.KindDoubleHold && !strings.Contains(a.Text, " during ") {
			line += " (no fault active)"
		}
		out = append(out, line)
	}
	return out
}
