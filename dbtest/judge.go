package dbtest

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/deadbolt-lab/deadbolt/reports"
)

// judge is what a run means for the test: "" when its verdict is the one
// expected, else why not, with the first anomaly of each kind and the path
// of the run's report.
func judge(r *reports.Results) string {
	if r.Matches {
		return ""
	}
	var b strings.Builder
	what := map[string]string{string(Unsafe): "a violation", string(Safe): "no violation"}[r.Expected]
	if r.Verdict == "unknown" {
		fmt.Fprintf(&b, "lock %s on %s (seed %d): the verdict is unknown, so the run proves nothing (expected %s, %s): %s",
			r.Lock, r.Scenario, r.Seed, r.Expected, what, r.Reason)
	} else {
		fmt.Fprintf(&b, "lock %s on %s (seed %d): expected %s (%s), the verdict is %s: %s",
			r.Lock, r.Scenario, r.Seed, r.Expected, what, r.Verdict, r.Reason)
	}
	for _, line := range reports.FirstOfEach(r, 3) {
		b.WriteString("\n  " + line)
	}
	fmt.Fprintf(&b, "\n  report: %s", reportPath(r))
	return b.String()
}

func reportPath(r *reports.Results) string { return filepath.Join(r.Dir, reports.HTMLFile) }
