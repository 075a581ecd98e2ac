package cli

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/reports"
)

// The end of a run names the page to open: the run's report.html, and the
// store's index of every run.
func TestSummaryNamesTheRunsPageAndTheIndex(t *testing.T) {
	dir := filepath.Join("store", "failover-simple", "20261122T234354.849Z")
	r := &reports.Results{Scenario: "failover-simple", Lock: "simple", Workload: "mutex", Nemesis: "isolate-primary",
		Expected: "unsafe", Verdict: "invalid", Matches: true, Health: "ok", Reason: "two clients held k0.", Dir: dir}
	var out bytes.Buffer
	require.NoError(t, summarize(&out, []*reports.Results{r}))
	require.Contains(t, out.String(), "  report: "+filepath.Join(dir, reports.HTMLFile)+" (and report.md beside it)\n")
	require.Contains(t, out.String(), "every run in the store: "+filepath.Join("store", reports.IndexFile)+"\n")
}
