package cli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// fakeMatrix writes what `deadbolt matrix [--shard i/n] --junit
// store/junit.xml` leaves in store, with fake runs in place of real ones:
// each run's verdict, damage and directory depend on its cell and seed
// alone, whichever store it is in, so a sharded store holds exactly the
// runs an unsharded one holds for its slice.
type fakeMatrix struct {
	locks, failures []string
	seed            uint64
	seeds           int
	started         time.Time
	took            time.Duration
	dirBase         int // seconds added to every run directory's time: another run of the same runs
}

func (fm fakeMatrix) write(t *testing.T, store string, shard shardFlag) {
	t.Helper()
	require.NoError(t, os.MkdirAll(store, 0o755))
	o := scenarios.RunOptions{Seed: fm.seed}
	cells, err := scenarios.Cells(fm.locks, fm.failures, o)
	require.NoError(t, err)
	args := []string{"--locks", strings.Join(fm.locks, ","), "--failures", strings.Join(fm.failures, ","),
		"--seeds", fmt.Sprint(fm.seeds), "--seed", fmt.Sprint(fm.seed), "--store", store}
	if shard.set() {
		args = append(args, fmt.Sprintf("--shard=%d/%d", shard.i, shard.n))
	}
	m := newMatrix(grid{kind: reports.KindMatrix, args: args, rows: fm.locks, cols: fm.failures, failures: scenarios.Failures()}, fm.seed, fm.seeds, shard)
	all := scenarios.MatrixRuns(cells, m.Seeds)
	runs := all
	if shard.set() {
		runs = scenarios.ShardRuns(all, shard.i, shard.n)
	}
	results := make([]*reports.Results, len(runs))
	errs := make([]error, len(runs))
	for i, run := range runs {
		k := 0
		for k < len(all) && all[k].Name() != run.Name() {
			k++
		}
		if run.Scenario.Lock == "redlock" && run.Seed == fm.seed+1 {
			errs[i] = errors.New("start cluster: no engine")
			continue
		}
		dir := filepath.Join(store, run.Scenario.Name, time.Date(2026, 1, 1, 0, 0, fm.dirBase+k, 0, time.UTC).Format(reports.RunDirTime))
		verdict := map[bool]string{true: "invalid", false: "valid"}[(run.Seed+uint64(k))%3 != 0]
		lost := int64(0)
		if verdict == "invalid" {
			lost = int64(k%5 + 1)
		}
		r := &reports.Results{Scenario: run.Scenario.Name, Lock: run.Scenario.Lock, Seed: run.Seed, Verdict: verdict,
			Expected: string(run.Scenario.Expect), Health: "ok", Dir: dir,
			Checks: []checker.Result{{Checker: "counter", Applicable: true, Metrics: map[string]int64{"lost_updates": lost}}}}
		r.Matches = r.Unjudged() || (verdict == "invalid") == (run.Scenario.Expect == scenarios.Unsafe)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		b, err := json.Marshal(r)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, reports.ResultsFile), b, 0o644))
		results[i] = r
	}
	m.Started, m.Took = fm.started, fm.took
	suite, _ := fillMatrix(&m, cells, runs, results, errs)
	require.NoError(t, reports.WriteMatrix(store, m))
	require.NoError(t, writeSuiteJUnit(filepath.Join(store, reports.JUnitFile), suite, m.Started))
	require.NoError(t, reports.WriteIndex(store))
}

// readMatrixPages reads a store's matrix.md, matrix.html and matrix.json
// (the last without its shards, which say how it was split).
func readMatrixPages(t *testing.T, store string) (md, page string, data map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(store, reports.MatrixMarkdownFile))
	require.NoError(t, err)
	md = string(b)
	b, err = os.ReadFile(filepath.Join(store, reports.MatrixHTMLFile))
	require.NoError(t, err)
	page = string(b)
	b, err = os.ReadFile(filepath.Join(store, reports.MatrixJSONFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &data))
	delete(data, "shards")
	delete(data, "of")
	return md, page, data
}

// A matrix run as two shards and merged gives the matrix of the run
// unsharded: the same cells, rates, medians, errors and links (relative to
// the merged store), and the same JUnit cases; the merged pages add only
// which shards they join. Fake runs, no container.
func TestTwoMatrixShardsMergedAreTheUnshardedMatrix(t *testing.T) {
	fm := fakeMatrix{locks: []string{"simple", "redlock"}, failures: []string{"pause", "reply-delay", "restart"},
		seed: 1, seeds: 3, started: time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC), took: 90 * time.Second}
	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	fm.write(t, whole, shardFlag{})
	var shards []string
	for i := 1; i <= 2; i++ {
		store := filepath.Join(root, fmt.Sprintf("shard-%d", i))
		part := fm
		part.took = time.Duration(40+10*i) * time.Second // the merged matrix took the longest shard's time
		if i == 2 {
			part.took = fm.took
		}
		part.write(t, store, shardFlag{i, 2})
		shards = append(shards, store)
	}
	shardMD, _, _ := readMatrixPages(t, shards[0])
	require.Contains(t, shardMD, "Shard 1 of 2 (--shard 1/2)")
	require.Contains(t, shardMD, "in other shards")

	merged := filepath.Join(root, "merged")
	code, out, stderr := deadbolt(t, append([]string{"report", "--merge", "--out", merged}, shards...)...)
	require.Equal(t, exitOK, code, "%s%s", out, stderr)
	require.Contains(t, out, "Shards 1, 2 of 2, merged.")
	require.Contains(t, out, filepath.Join(merged, reports.MatrixHTMLFile))

	note := "Shards 1, 2 of 2, merged."
	wantMD, wantPage, wantData := readMatrixPages(t, whole)
	gotMD, gotPage, gotData := readMatrixPages(t, merged)
	require.Equal(t, wantMD, strings.Replace(gotMD, note+"\n\n", "", 1))
	require.Equal(t, wantPage, strings.Replace(gotPage, "<p>"+note+"</p>\n", "", 1))
	require.Equal(t, wantData, gotData)
	require.Contains(t, wantMD, "](pause-simple/20260101T000000.000Z/report.html)", "links are relative to the store")
	require.Contains(t, wantMD, "no verdict: seed 2: start cluster: no engine")
	require.Contains(t, wantMD, "`deadbolt matrix --locks simple,redlock --failures pause,reply-delay,restart --seeds 3 --seed 1`")
	require.NotContains(t, gotMD, "in other shards")
	// The same cases; the merged file sorts them by name (shards finish in any order).
	wantCases, gotCases := readCases(t, filepath.Join(whole, reports.JUnitFile)), readCases(t, filepath.Join(merged, reports.JUnitFile))
	for _, s := range wantCases.Suites {
		slices.SortStableFunc(s.Cases, func(a, b junitCase) int { return cmp.Compare(a.Name, b.Name) })
	}
	require.Equal(t, wantCases, gotCases)

	// One shard alone merges, and says what is missing.
	alone := filepath.Join(root, "alone")
	code, out, stderr = deadbolt(t, "report", "--merge", "--out", alone, shards[0])
	require.Equal(t, exitOK, code, "%s%s", out, stderr)
	require.Contains(t, out, "Shard 1 of 2 (--shard 1/2): the other shards' runs are in their own stores")
	require.Contains(t, out, "in other shards")
}

// Stores that are not shards of one matrix are refused before anything is
// copied, saying why: a shard twice, another split, other seeds or locks,
// and a merged store that holds a matrix already.
func TestMatrixMergeRefusesStoresOfDifferentMatrices(t *testing.T) {
	fm := fakeMatrix{locks: []string{"simple"}, failures: []string{"pause", "reply-delay"},
		seed: 1, seeds: 2, started: time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC), took: time.Minute}
	root := t.TempDir()
	runsSoFar := 0
	store := func(name string, fm fakeMatrix, shard shardFlag) string {
		dir := filepath.Join(root, name)
		runsSoFar += 100
		fm.dirBase = runsSoFar
		fm.write(t, dir, shard)
		return dir
	}
	shard1 := store("shard-1", fm, shardFlag{1, 2})
	shard2 := store("shard-2", fm, shardFlag{2, 2})
	whole := store("whole", fm, shardFlag{})
	otherSeed := fm
	otherSeed.seed = 5
	otherLocks := fm
	otherLocks.locks = []string{"simple", "bsm"}
	for _, tc := range []struct {
		name   string
		stores []string
		msg    string
	}{
		{"a shard twice", []string{shard1, shard2, store("shard-1-again", fm, shardFlag{1, 2})}, "both hold shard 1 of 2 of the matrix"},
		{"another split", []string{shard1, whole}, "split into shards of 2 and 1"},
		{"other seeds", []string{shard1, store("seed-5", otherSeed, shardFlag{2, 2})}, "seeds 1, 2 and 5, 6"},
		{"other locks", []string{shard1, store("bsm", otherLocks, shardFlag{2, 2})}, "locks simple and simple,bsm"},
	} {
		out := filepath.Join(root, "out-"+strings.ReplaceAll(tc.name, " ", "-"))
		code, _, stderr := deadbolt(t, append([]string{"report", "--merge", "--out", out}, tc.stores...)...)
		require.Equal(t, exitBadInput, code, tc.name)
		require.Contains(t, stderr, tc.msg, tc.name)
		_, err := os.Stat(out)
		require.True(t, os.IsNotExist(err), "%s: nothing copied", tc.name)
	}
	holds := filepath.Join(root, "holds")
	require.NoError(t, os.MkdirAll(holds, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(holds, reports.MatrixJSONFile), []byte("{}"), 0o644))
	code, _, stderr := deadbolt(t, "report", "--merge", "--out", holds, shard1, shard2)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, stderr, "already holds a matrix")
}

// A cell whose every run showed its failure cannot arise for the lock is
// n/a with that evidence, and exits 0; a cell whose staging merely missed
// is unknown and exits 2, the cell named.
func TestACellThatCannotAriseIsNotApplicableAndAMissIsUnknown(t *testing.T) {
	o := scenarios.RunOptions{Seed: 1}
	cells, err := scenarios.Cells([]string{"simple"}, []string{"pause-in-release"}, o)
	require.NoError(t, err)
	m := newMatrix(grid{kind: reports.KindMatrix, rows: []string{"simple"}, cols: []string{"pause-in-release"}, failures: scenarios.Failures()}, 1, 2, shardFlag{})
	runs := scenarios.MatrixRuns(cells, m.Seeds)
	require.Len(t, runs, 2)
	result := func(na string) *reports.Results {
		return &reports.Results{Scenario: runs[0].Scenario.Name, Lock: "simple", Verdict: "unknown", Expected: "safe", Health: "ok",
			Staging: "1 step of the nemesis did not go as planned", NotApplicable: na}
	}
	oneStep := "the lock's release is one step: 9 of 20 strikes of pause-in-release landed inside it"
	_, code := fillMatrix(&m, cells, runs, []*reports.Results{result(oneStep), result(oneStep)}, make([]error, 2))
	require.Equal(t, exitOK, code)
	require.Equal(t, "na", m.Cells[0].Class())
	require.Contains(t, m.Cells[0].NotApplicable, oneStep)

	m = newMatrix(grid{kind: reports.KindMatrix, rows: []string{"simple"}, cols: []string{"pause-in-release"}, failures: scenarios.Failures()}, 1, 2, shardFlag{})
	_, code = fillMatrix(&m, cells, runs, []*reports.Results{result(oneStep), result("")}, make([]error, 2))
	require.Equal(t, exitUnknown, code, "a run whose staging merely missed leaves the cell undecided")
	require.Equal(t, "unknown", m.Cells[0].Class())

	// An audit's cells are unjudged: an unknown verdict there answers
	// nothing either, so it exits 2 and is named; a decided one exits 0.
	unjudged := func(verdict string) *reports.Results {
		r := result("")
		r.Expected, r.Verdict, r.Matches = "unknown", verdict, true
		return r
	}
	m = newMatrix(grid{kind: reports.KindMatrix, rows: []string{"simple"}, cols: []string{"pause-in-release"}, failures: scenarios.Failures()}, 1, 2, shardFlag{})
	_, code = fillMatrix(&m, cells, runs, []*reports.Results{unjudged("valid"), unjudged("unknown")}, make([]error, 2))
	require.Equal(t, exitUnknown, code, "an unjudged cell with an unknown run is undecided")
	require.Len(t, undecidedCells(m), 1)
	m = newMatrix(grid{kind: reports.KindMatrix, rows: []string{"simple"}, cols: []string{"pause-in-release"}, failures: scenarios.Failures()}, 1, 2, shardFlag{})
	_, code = fillMatrix(&m, cells, runs, []*reports.Results{unjudged("valid"), unjudged("invalid")}, make([]error, 2))
	require.Equal(t, exitOK, code, "an unjudged cell that reached verdicts is decided")
	require.Empty(t, undecidedCells(m))
}

// A cell that the runs of the shard that ran it showed n/a is planned like
// any cell in the other shards: the shards merge (they are one matrix),
// and the merged cell is n/a with the runs' evidence. (make audit's merge
// refused its four shards so, 2026-11-28.)
func TestShardsMergeWhenOneShardsRunsShowACellNotApplicable(t *testing.T) {
	locks, failures := []string{"simple"}, []string{"pause", "pause-in-release"}
	cells, err := scenarios.Cells(locks, failures, scenarios.RunOptions{Seed: 1})
	require.NoError(t, err)
	oneStep := "the lock's release is one step: 9 of 20 strikes of pause-in-release landed inside it"
	root := t.TempDir()
	var stores []string
	for i := 1; i <= 2; i++ {
		store := filepath.Join(root, fmt.Sprintf("shard-%d", i))
		shard := shardFlag{i, 2}
		args := []string{"--locks", "simple", "--failures", "pause,pause-in-release", "--seeds", "1", "--seed", "1", "--store", store, fmt.Sprintf("--shard=%d/2", i)}
		m := newMatrix(grid{kind: reports.KindMatrix, args: args, rows: locks, cols: failures, failures: scenarios.Failures()}, 1, 1, shard)
		runs := scenarios.ShardRuns(scenarios.MatrixRuns(cells, m.Seeds), i, 2)
		require.Len(t, runs, 1)
		results := make([]*reports.Results, len(runs))
		for k, run := range runs {
			dir := filepath.Join(store, run.Scenario.Name, time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC).Format(reports.RunDirTime))
			r := &reports.Results{Scenario: run.Scenario.Name, Lock: "simple", Seed: run.Seed, Verdict: "valid", Expected: string(run.Scenario.Expect), Health: "ok", Dir: dir, Matches: true}
			if run.Scenario.Name == cells[1].Scenario.Name {
				r.Verdict, r.Matches, r.Staging, r.NotApplicable = "unknown", false, "1 step of the nemesis did not go as planned", oneStep
			}
			require.NoError(t, os.MkdirAll(dir, 0o755))
			b, err := json.Marshal(r)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, reports.ResultsFile), b, 0o644))
			results[k] = r
		}
		suite, code := fillMatrix(&m, cells, runs, results, make([]error, len(runs)))
		require.Equal(t, exitOK, code)
		require.NoError(t, reports.WriteMatrix(store, m))
		require.NoError(t, writeSuiteJUnit(filepath.Join(store, reports.JUnitFile), suite, m.Started))
		require.NoError(t, reports.WriteIndex(store))
		stores = append(stores, store)
	}
	merged := filepath.Join(root, "merged")
	code, out, stderr := deadbolt(t, append([]string{"report", "--merge", "--out", merged}, stores...)...)
	require.Equal(t, exitOK, code, "%s%s", out, stderr)
	_, _, data := readMatrixPages(t, merged)
	var na []string
	for _, c := range data["cells"].([]any) {
		if s, ok := c.(map[string]any)["not_applicable"].(string); ok {
			na = append(na, s)
		}
	}
	require.Len(t, na, 1, "the one cell its runs showed n/a, and only it")
	require.Contains(t, na[0], oneStep)
}
