package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/reports"
)

// storedRun writes a finished run as a run would, at store/s/<time>, and
// removes its report.html (report must write it again).
func storedRun(t *testing.T) (store, dir string) {
	t.Helper()
	store = t.TempDir()
	dir = filepath.Join(store, "s", "20260101T000000.000Z")
	require.NoError(t, os.MkdirAll(filepath.Dir(dir), 0o755))
	require.NoError(t, os.Rename(writeHistory(t, 12, true), dir))
	ops, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	require.NoError(t, err)
	rep := checker.Check(ops, checker.Options{})
	r := &reports.Results{Scenario: "s", Expected: "unsafe", Dir: dir, Health: "ok"}
	r.SetCheck(rep, rep.Verdict == checker.Invalid)
	require.NoError(t, reports.WriteRun(dir, r, rep))
	require.NoError(t, os.Remove(filepath.Join(dir, reports.HTMLFile)))
	return store, dir
}

func TestReportRerendersARunAndTheIndex(t *testing.T) {
	store, dir := storedRun(t)
	code, out, stderr := deadbolt(t, "report", dir)
	require.Equal(t, exitOK, code, "%s%s", out, stderr)
	require.Contains(t, out, "s: invalid (expected unsafe)")
	for _, f := range []string{filepath.Join(dir, reports.HTMLFile), filepath.Join(dir, reports.ReportFile), filepath.Join(store, reports.IndexFile)} {
		_, err := os.Stat(f)
		require.NoError(t, err)
		require.Contains(t, out, f)
	}
}

func TestReportRefusesWhatIsNotARunDirectory(t *testing.T) {
	_, dir := storedRun(t)
	brokenHistory := t.TempDir()
	require.NoError(t, os.CopyFS(brokenHistory, os.DirFS(dir)))
	require.NoError(t, os.WriteFile(filepath.Join(brokenHistory, "history.jsonl"), []byte("{\"index\":0,\"ti\nnot json\n"), 0o644))
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"report"}, "report takes one run directory"},
		{[]string{"report", dir, dir}, "report takes one run directory"},
		{[]string{"report", filepath.Join(dir, "nope")}, "no such file or directory"},
		{[]string{"report", filepath.Join(dir, "history.jsonl")}, "is not a run directory"},
		{[]string{"report", t.TempDir()}, "has no results.json: not a finished run's directory"},
		{[]string{"report", brokenHistory}, "history.jsonl"},
	} {
		code, _, stderr := deadbolt(t, tc.args...)
		require.Equal(t, exitBadInput, code, "%v: %s", tc.args, stderr)
		require.Contains(t, stderr, tc.msg, "%v", tc.args)
	}
}

// A --junit file that cannot be written is bad input, refused before any
// container starts.
func TestJUnitPathIsCheckedFirst(t *testing.T) {
	for _, tc := range []struct{ path, msg string }{
		{"/proc/no-junit-here/j.xml", "--junit /proc/no-junit-here/j.xml"},
		{t.TempDir(), "is a directory"},
	} {
		code, _, stderr := deadbolt(t, "scenario", "failover-simple", "--store", t.TempDir(), "--junit", tc.path)
		require.Equal(t, exitBadInput, code, stderr)
		require.Contains(t, stderr, tc.msg)
	}
}
