package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/reports"
)

// A tiny real matrix (one lock, two failures, one seed: two runs) run
// whole and as two shards side by side, as two CI runners would, then
// merged: the merged matrix has the unsharded one's cells, runs and
// verdicts, and its links open the runs copied into the merged store.
// Real runs differ in their damage from one run to the next, so the exact
// equality of pages is TestTwoMatrixShardsMergedAreTheUnshardedMatrix's
// (the same runs, faked); here a merge of the unsharded store alone gives
// its pages byte for byte.
func TestRealMatrixShardsMergeIntoTheUnshardedMatrix(t *testing.T) {
	clustertest.RequireDocker(t)
	bin := buildDeadbolt(t)
	root := t.TempDir()
	matrix := func(store string, shard ...string) string {
		args := append([]string{"matrix", "--locks", "simple", "--failures", "pause,reply-delay", "--seeds", "1", "--seed", "1",
			"--parallel", "2", "--store", store, "--junit", filepath.Join(store, reports.JUnitFile)}, shard...)
		out, err := exec.Command(bin, args...).CombinedOutput()
		require.NoError(t, err, "%v\n%s", args, out)
		return string(out)
	}
	whole := filepath.Join(root, "whole")
	matrix(whole)
	shards := []string{filepath.Join(root, "shard-1"), filepath.Join(root, "shard-2")}
	outs := make([]string, 2)
	var wg sync.WaitGroup
	for i, store := range shards {
		wg.Go(func() { outs[i] = matrix(store, "--shard", []string{"1/2", "2/2"}[i]) })
	}
	wg.Wait()
	require.Contains(t, outs[0], "shard 1/2: 1 of the matrix's 2 runs")
	require.Contains(t, outs[1], "shard 2/2: 1 of the matrix's 2 runs")

	merged := filepath.Join(root, "merged")
	code, out, stderr := deadbolt(t, "report", "--merge", "--out", merged, shards[0], shards[1])
	require.Equal(t, exitOK, code, "%s%s", out, stderr)
	require.Contains(t, out, "2 runs of 2 stores merged")
	require.Contains(t, out, "Shards 1, 2 of 2, merged.")

	// The same cells, each with the same runs (by seed) and verdicts.
	type run struct {
		Seed    uint64 `json:"seed"`
		Verdict string `json:"verdict"`
	}
	type cell struct {
		Lock, Failure, Scenario, Expected string
		Runs                              []run
	}
	cells := func(store string) []cell {
		b, err := os.ReadFile(filepath.Join(store, reports.MatrixJSONFile))
		require.NoError(t, err)
		var f struct{ Cells []cell }
		require.NoError(t, json.Unmarshal(b, &f))
		return f.Cells
	}
	want := cells(whole)
	require.Len(t, want, 2)
	require.Equal(t, want, cells(merged))
	for _, c := range want {
		require.Len(t, c.Runs, 1, "%s x %s ran once", c.Lock, c.Failure)
	}

	// Every run's link opens a report copied into the merged store.
	md, err := os.ReadFile(filepath.Join(merged, reports.MatrixMarkdownFile))
	require.NoError(t, err)
	links := regexp.MustCompile(`\]\(([^)]+)\)`).FindAllStringSubmatch(string(md), -1)
	require.Len(t, links, 2)
	for _, l := range links {
		require.False(t, filepath.IsAbs(l[1]), l[1])
		require.FileExists(t, filepath.Join(merged, filepath.FromSlash(l[1])))
	}
	page, err := os.ReadFile(filepath.Join(merged, reports.MatrixHTMLFile))
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(string(page), `<td class="unsafe"`)+strings.Count(string(page), `<td class="safe"`),
		"both cells judged: %s", page)

	// The unsharded store merged alone gives its own pages back.
	again := filepath.Join(root, "again")
	code, out, stderr = deadbolt(t, "report", "--merge", "--out", again, whole)
	require.Equal(t, exitOK, code, "%s%s", out, stderr)
	for _, name := range []string{reports.MatrixMarkdownFile, reports.MatrixHTMLFile, reports.MatrixJSONFile} {
		a, err := os.ReadFile(filepath.Join(whole, name))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(again, name))
		require.NoError(t, err)
		require.Equal(t, string(a), string(b), name)
	}
}
