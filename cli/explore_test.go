package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/explore"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// An exploration of two runs: each generated scenario is written as a
// scenario file that reads back, each run reaches the store with a
// verdict, and the reports and the coverage table account for both.
func TestExploreRunsJudgesAndReports(t *testing.T) {
	clustertest.RequireDocker(t)
	bin := buildDeadbolt(t)
	store := t.TempDir()
	out, err := exec.Command(bin, "explore", "--lock", "get-then-del-no-points", "--runs", "2", "--seed", "5", "--shrink", "0", "--store", store).CombinedOutput()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	}
	require.Contains(t, []int{exitOK, exitContradicts}, code, "%s", out)
	dirs, err := filepath.Glob(filepath.Join(store, "explore", "get-then-del-no-points-5-*"))
	require.NoError(t, err)
	require.Len(t, dirs, 1)
	rep, err := explore.ReadReport(dirs[0])
	require.NoError(t, err)
	require.Len(t, rep.Scenarios, 2)
	drawn := 0
	for _, c := range rep.Coverage {
		drawn += c.Drawn
	}
	require.Equal(t, 2, drawn)
	for _, sc := range rep.Scenarios {
		f, err := scenarios.ReadFile(filepath.Join(dirs[0], sc.File))
		require.NoError(t, err)
		require.NotNil(t, f.Seed, "a generated file carries its run's seed")
		require.Equal(t, sc.Seed, *f.Seed)
		_, err = f.Scenario.Prepare(scenarios.RunOptions{})
		require.NoError(t, err)
		require.Len(t, sc.Runs, 1)
		require.Contains(t, []string{"valid", "invalid", "unknown"}, sc.Runs[0].Verdict, sc.Runs[0].Error)
		_, err = os.Stat(filepath.Join(dirs[0], sc.Runs[0].Dir, "results.json"))
		require.NoError(t, err)
	}
	for _, name := range []string{explore.JSONFile, explore.MarkdownFile, explore.HTMLFile} {
		_, err := os.Stat(filepath.Join(dirs[0], name))
		require.NoError(t, err)
	}
	require.Equal(t, len(rep.Findings) > 0, code == exitContradicts, "exit 1 exactly when a finding was made")
}

// A recorded bug's scenario file on three versions of its library, given
// out of order: the first affected and the first fixed are named.
func TestBisectNamesTheFirstAffectedAndTheFirstFixedVersion(t *testing.T) {
	clustertest.RequireDocker(t)
	bin := buildDeadbolt(t)
	store := t.TempDir()
	file := filepath.Join(repoRoot(t), "scenarios", "findings", "redsync-extend-lost-lock.json")
	cmd := exec.Command(bin, "bisect", file, "--lock", "redsync", "--versions", "v4.0.4,v4.0.3", "--seeds", "1", "--seed", "1", "--store", store)
	cmd.Dir = repoRoot(t) // the library's adapter is found from the checkout
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	require.Equal(t, exitContradicts, exit.ExitCode(), "%s", out)
	require.Contains(t, string(out), "affected from the oldest version tried (v4.0.3), first fixed v4.0.4 (2 versions tried)")
	dirs, err := filepath.Glob(filepath.Join(store, "bisect", "redsync-*"))
	require.NoError(t, err)
	require.Len(t, dirs, 1)
	b, err := os.ReadFile(filepath.Join(dirs[0], "bisect.md"))
	require.NoError(t, err)
	require.Contains(t, string(b), "| v4.0.3 | affected |")
	require.Contains(t, string(b), "| v4.0.4 | unaffected |")
}
