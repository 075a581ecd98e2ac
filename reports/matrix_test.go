package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
)

func matrixRun(dir, verdict, expected string, doubleHolds int64) *Results {
	r := &Results{Verdict: verdict, Expected: expected, Dir: dir,
		Checks: []checker.Result{{Checker: "double-holds", Applicable: true, Metrics: map[string]int64{"double_holds": doubleHolds}}}}
	r.Matches = expected == "unknown" || (verdict == "invalid") == (expected == "unsafe")
	return r
}

// Each cell says how often the lock broke, the median damage, where it
// stands against the known results (a contradiction stands out), and links
// every run's report; a lock no template fits is n/a.
func TestMatrixCellsSayHowOftenTheLockBrokeAndLinkEveryRun(t *testing.T) {
	store := t.TempDir()
	m := Matrix{
		Command: "deadbolt matrix", Started: time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC), Took: 90 * time.Second,
		Seeds: []uint64{1, 2, 3}, Locks: []string{"simple", "redlock"},
		Failures: []MatrixFailure{{Name: "failover", What: "the master fails over"}, {Name: "restart", What: "a node restarts"}},
		Cells: []MatrixCell{
			{Lock: "simple", Failure: "failover", Scenario: "failover-simple", Expected: "unsafe", Runs: []*Results{
				matrixRun(filepath.Join(store, "failover-simple", "a"), "invalid", "unsafe", 4),
				matrixRun(filepath.Join(store, "failover-simple", "b"), "valid", "unsafe", 0),
				matrixRun(filepath.Join(store, "failover-simple", "c"), "invalid", "unsafe", 2),
			}},
			{Lock: "simple", Failure: "restart", NotApplicable: "restart-redlock: lock simple runs over at most 1 master group"},
			{Lock: "redlock", Failure: "failover", Scenario: "failover-redlock", Expected: "safe", Runs: []*Results{
				matrixRun(filepath.Join(store, "failover-redlock", "a"), "valid", "safe", 0),
			}, Errors: []MatrixError{{Seed: 2, Reason: "the cluster did not start"}}},
			{Lock: "redlock", Failure: "restart", Scenario: "restart-redlock", Expected: "unknown", Runs: []*Results{
				matrixRun(filepath.Join(store, "restart-redlock", "a"), "valid", "unknown", 0),
			}},
		},
	}
	c := m.cell("simple", "failover")
	require.Equal(t, "unsafe", c.Class())
	require.Equal(t, "unsafe 2/3 · 2 double holds", c.Summary())
	one := MatrixCell{Runs: []*Results{matrixRun(filepath.Join(store, "one"), "invalid", "unsafe", 1)}}
	require.Equal(t, "1 double hold", one.MedianDamage(), "one, not ones")
	require.True(t, c.Contradicted(), "seed 2 was valid where unsafe is known")
	require.Equal(t, "expected unsafe: CONTRADICTED", c.Expectation())
	require.Equal(t, "na", m.cell("simple", "restart").Class())
	require.Equal(t, "unknown", m.cell("redlock", "failover").Class(), "a run without a verdict leaves the cell unjudged")
	require.Equal(t, "unknown 0/1 (+1 unknown)", m.cell("redlock", "failover").Summary())
	require.Equal(t, "safe", m.cell("redlock", "restart").Class())
	require.Equal(t, "not judged before", m.cell("redlock", "restart").Expectation())

	require.NoError(t, WriteMatrix(store, m))
	md, err := os.ReadFile(filepath.Join(store, MatrixMarkdownFile))
	require.NoError(t, err)
	require.Contains(t, string(md), "| simple | **unsafe 2/3 · 2 double holds** (expected unsafe: CONTRADICTED) [1](failover-simple/a/report.html) [2](failover-simple/b/report.html) [3](failover-simple/c/report.html) | n/a |")
	require.Contains(t, string(md), "simple x restart: n/a: restart-redlock: lock simple runs over at most 1 master group")
	require.Contains(t, string(md), "no verdict: seed 2: the cluster did not start")
	page, err := os.ReadFile(filepath.Join(store, MatrixHTMLFile))
	require.NoError(t, err)
	require.Equal(t, 4, bytes.Count(page, []byte(`<td class=`)))
	require.Contains(t, string(page), `<td class="unsafe" title="failover-simple">`)
	require.Contains(t, string(page), `<td class="na"`)
	require.Contains(t, string(page), `class="contradicted"`)
	require.Contains(t, string(page), `<a href="failover-simple/c/report.html">3</a>`)
}

// A sharded matrix says which shards it holds, and which a merge lacks.
func TestShardNoteSaysWhichShardsAreHere(t *testing.T) {
	require.Empty(t, Matrix{Shards: []int{1}, Of: 1}.ShardNote())
	require.Contains(t, Matrix{Shards: []int{2}, Of: 3}.ShardNote(), "Shard 2 of 3 (--shard 2/3)")
	require.Equal(t, "Shards 1, 2, 3 of 3, merged.", Matrix{Shards: []int{1, 2, 3}, Of: 3}.ShardNote())
	require.Equal(t, "Shards 1, 3 of 4, merged; shards 2, 4 not merged: their runs are missing.", Matrix{Shards: []int{1, 3}, Of: 4}.ShardNote())
}
