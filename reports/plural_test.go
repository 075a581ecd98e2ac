package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/history"
)

// One of a thing is singular in every page and line: a matrix or a sweep
// of one seed, a store of one run, one anomaly past the report's bound,
// one unit oversold, one op.
func TestOneOfAThingIsSingular(t *testing.T) {
	store := t.TempDir()
	m := Matrix{Command: "deadbolt matrix --seeds 1", Seeds: []uint64{7}, Locks: []string{"simple"},
		Failures: []MatrixFailure{{Name: "failover"}},
		Cells: []MatrixCell{{Lock: "simple", Failure: "failover", Scenario: "failover-simple", Expected: "unsafe",
			Runs: []*Results{matrixRun(filepath.Join(store, "failover-simple", "a"), "invalid", "unsafe", 1)}}}}
	require.NoError(t, WriteMatrix(store, m))
	md, err := os.ReadFile(filepath.Join(store, MatrixMarkdownFile))
	require.NoError(t, err)
	require.Contains(t, string(md), "`deadbolt matrix --seeds 1`: 1 seed (7),")
	require.Contains(t, string(md), "unsafe 1/1 · 1 double hold")
	page, err := os.ReadFile(filepath.Join(store, MatrixHTMLFile))
	require.NoError(t, err)
	require.Contains(t, string(page), "</code>: 1 seed (7),")

	var sw strings.Builder
	SweepMarkdown(&sw, Sweep{Scenario: "pause-simple", Command: "deadbolt sweep", Seeds: []uint64{1}}, "x.svg")
	require.Contains(t, sw.String(), "`deadbolt sweep`: 1 seed a point (1),")

	root := t.TempDir()
	runDir(t, root, "failover-simple", "20260101T000000.000Z", doubleHold(), "unsafe")
	bad := filepath.Join(root, "pause-simple", "20260104T000000.000Z")
	require.NoError(t, os.MkdirAll(bad, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bad, ResultsFile), []byte("{"), 0o644))
	require.NoError(t, WriteIndex(root))
	index, err := os.ReadFile(filepath.Join(root, IndexFile))
	require.NoError(t, err)
	require.Contains(t, string(index), "1 run in this store,")
	require.Contains(t, string(index), "1 run directory has no readable results.json: pause-simple/20260104T000000.000Z.")

	r := &Results{Scenario: "x"}
	for range anomaliesPerKind + 1 {
		r.Anomalies = append(r.Anomalies, checker.Anomaly{Kind: checker.KindDoubleHold, Text: "two holders"})
	}
	require.Contains(t, Markdown(r), "- ... and 1 more double-hold anomaly (all in results.json)")
	r.Anomalies = append(r.Anomalies, r.Anomalies[0])
	require.Contains(t, Markdown(r), "- ... and 2 more double-hold anomalies (all in results.json)")

	oversold := func(n int64) *Results {
		return &Results{Checks: []checker.Result{{Checker: "orders", Applicable: true, Metrics: map[string]int64{"oversold_units": n, "lost_updates": n}}}}
	}
	require.Equal(t, "1 lost update, 1 unit oversold", Damage(oversold(1)))
	require.Equal(t, "2 lost updates, 2 units oversold", Damage(oversold(2)))

	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := NewProgress("s", start, 10*time.Second)
	p.Add([]history.Op{
		{Index: 0, Process: 0, Type: history.Invoke, F: history.Acquire, Key: "k", Lease: "p0.1"},
		{Index: 1, Process: 0, Type: history.OK, F: history.Acquire, Key: "k", Lease: "p0.1"},
	})
	require.Equal(t, "s 1s/10s (9s left), 1 op, 1 acquire, faults: none", p.Line(start.Add(time.Second)))
}
