package scenarios_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/scenarios"
)

func TestShardsCoverTheSuiteOnceBalanced(t *testing.T) {
	var suite []scenarios.Scenario
	for _, name := range scenarios.CISuite() {
		s, err := scenarios.Get(name)
		require.NoError(t, err)
		suite = append(suite, s)
	}
	for n := 1; n <= 5; n++ {
		seen := map[string]int{}
		var lengths []float64
		for i := 1; i <= n; i++ {
			shard := scenarios.Shard(suite, i, n)
			require.Equal(t, shard, scenarios.Shard(suite, i, n), "the same slice every time")
			total := 0.0
			for _, s := range shard {
				seen[s.Name]++
				total += s.Length().Seconds()
			}
			lengths = append(lengths, total)
		}
		require.Len(t, seen, len(suite), "n=%d covers the suite", n)
		for name, c := range seen {
			require.Equal(t, 1, c, "n=%d runs %s once", n, name)
		}
		longest := 0.0
		for _, s := range suite {
			longest = max(longest, s.Length().Seconds())
		}
		// Greedy longest-first: no shard exceeds another by more than the longest scenario.
		require.LessOrEqual(t, slices.Max(lengths)-slices.Min(lengths), longest, "n=%d: %v", n, lengths)
	}
}

func TestParseShard(t *testing.T) {
	i, n, err := scenarios.ParseShard("2/3")
	require.NoError(t, err)
	require.Equal(t, [2]int{2, 3}, [2]int{i, n})
	for _, bad := range []string{"0/3", "4/3", "3", "a/b", "1/0", "-1/2", ""} {
		_, _, err := scenarios.ParseShard(bad)
		require.Error(t, err, bad)
	}
}

// The matrix's runs (cells x seeds) shard as the suite does: every run in
// exactly one shard, the same slice every time, balanced by length.
func TestMatrixShardsCoverEveryRunOnce(t *testing.T) {
	cells, err := scenarios.Cells([]string{"simple", "redlock", "bsm"}, scenarios.FailureNames(), scenarios.RunOptions{Seed: 1})
	require.NoError(t, err)
	runs := scenarios.MatrixRuns(cells, []uint64{1, 2, 3})
	require.NotEmpty(t, runs)
	for n := 1; n <= 4; n++ {
		seen := map[string]int{}
		var lengths []float64
		longest := 0.0
		for i := 1; i <= n; i++ {
			shard := scenarios.ShardRuns(runs, i, n)
			require.Equal(t, shard, scenarios.ShardRuns(runs, i, n), "the same slice every time")
			total := 0.0
			for _, r := range shard {
				seen[r.Name()]++
				require.Equal(t, cells[r.Cell].Scenario.Name, r.Scenario.Name)
				total += r.Scenario.Length().Seconds()
				longest = max(longest, r.Scenario.Length().Seconds())
			}
			lengths = append(lengths, total)
		}
		require.Len(t, seen, len(runs), "n=%d covers the matrix", n)
		for name, c := range seen {
			require.Equal(t, 1, c, "n=%d runs %s once", n, name)
		}
		require.LessOrEqual(t, slices.Max(lengths)-slices.Min(lengths), longest, "n=%d: %v", n, lengths)
	}
}
