package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/history"
)

// A kind of anomaly the reports have no special case for (the releases
// checker's) still shows in report.md, in the first-of-each lines and in
// the summary table.
func TestNewAnomalyKindsRender(t *testing.T) {
	ops := []history.Op{
		{Index: 0, Time: 1e6, Type: history.Invoke, Process: 0, F: history.Acquire, Key: "k", Lease: "a", TTL: 1e9},
		{Index: 1, Time: 2e6, Type: history.OK, Process: 0, F: history.Acquire, Key: "k", Lease: "a", Owner: "a", TTL: 1e9},
		{Index: 2, Time: 3e6, Type: history.Invoke, Process: 1, F: history.Release, Key: "k", Lease: "x", Owner: "x"},
		{Index: 3, Time: 4e6, Type: history.OK, Process: 1, F: history.Release, Key: "k", Lease: "x"},
	}
	rep := checker.Check(ops, checker.Options{Checkers: []string{"double-holds", "releases"}})
	require.Equal(t, checker.Invalid, rep.Verdict)
	r := &Results{Scenario: "s", Lock: "l", Workload: "mutex", Nemesis: "none", Expected: "safe", Dir: "d"}
	r.SetCheck(rep, false)

	md := Markdown(r)
	require.Contains(t, md, "- "+checker.KindReleaseNotHeld+" at t+0.003s: process 1 released lease x")
	require.Contains(t, md, "| releases | invalid |")
	first := strings.Join(FirstOfEach(r, 5), "\n")
	require.Contains(t, first, "first "+checker.KindReleaseNotHeld+": ")
	var b bytes.Buffer
	require.NoError(t, Table(&b, []*Results{r}))
	require.Regexp(t, `s\s+l\s+mutex\s+none\s+0\s+1\s+0\s+-\s+safe\s+invalid\s+FAIL`, b.String())
}
