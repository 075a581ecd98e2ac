package scenarios

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// judged is a run past its heal, for the judge and report stages, which
// need no cluster.
func judged(t *testing.T, name, health string) *run {
	s, err := Get(name)
	require.NoError(t, err)
	kind, err := workloads.Get(s.WorkloadName())
	require.NoError(t, err)
	return &run{s: s, o: RunOptions{Seed: 3, Store: t.TempDir()}, logf: t.Logf, kind: kind, health: health}
}

func TestTheJudgeVoidsARunThatDidNotTestWhatItSetOutTo(t *testing.T) {
	for _, tc := range []struct {
		health, refused string
		nemesisErr      error
		why             string
	}{
		{"ok", "", nil, "the nemesis plan never injected its fault"},
		{"ok", "", errors.New("no such node"), "the nemesis failed (no such node)"},
		{"redis-2 is down", "", nil, "the cluster was not healthy after the run (redis-2 is down)"},
		{"ok", "EVAL", nil, "deadbolt's ACL refused the lock's own commands (EVAL)"},
	} {
		r := judged(t, "failover-simple", tc.health)
		report := r.judge(nil, tc.nemesisErr, tc.refused)
		require.Equal(t, checker.Unknown, report.Verdict, tc.why)
		require.Contains(t, report.Reason, tc.why)
	}
}

func TestTheReportStageWritesTheRunsResults(t *testing.T) {
	r := judged(t, "failover-simple", "ok")
	var err error
	r.dir, err = newRunDir(r.o.Store, r.s.Name)
	require.NoError(t, err)
	f, err := os.Create(filepath.Join(r.dir, HistoryFile)) // what record opens
	require.NoError(t, err)
	defer f.Close()
	rec := history.NewRecorder(f)
	rec.Mark(history.PhaseFaults)
	rec.Mark(history.PhaseEnd)
	require.NoError(t, rec.Err())
	ops := rec.Ops()
	res, err := r.report(context.Background(), r.judge(ops, nil, ""), len(ops))
	require.NoError(t, err)
	require.Equal(t, "unknown", res.Verdict)
	stored, err := reports.ReadResults(filepath.Join(r.dir, reports.ResultsFile))
	require.NoError(t, err)
	require.Equal(t, "failover-simple", stored.Scenario)
	require.Equal(t, uint64(3), stored.Seed)
	require.Equal(t, []string{"run", "--file", filepath.Join(r.dir, SpecFile), "--seed", "3"}, stored.Rerun)
}

// A double hold in a run whose fault never struck is a violation all the
// same (invalid, the staging said beside it), but no reproduction: an
// unsafe scenario does not pass on it, and a safe one, which claims safety
// under the fault it stages, is not contradicted by it: undecided, exit 2.
func TestAProvenViolationStandsThoughTheStrikeMissed(t *testing.T) {
	for _, tc := range []struct {
		scenario              string
		undecided, contradict bool
	}{{"failover-simple", true, false}, {"crash-simple", true, false}} {
		r := judged(t, tc.scenario, "ok")
		var err error
		r.dir, err = newRunDir(r.o.Store, r.s.Name)
		require.NoError(t, err)
		f, err := os.Create(filepath.Join(r.dir, HistoryFile))
		require.NoError(t, err)
		rec := history.NewRecorder(f)
		rec.Mark(history.PhaseFaults)
		for p := range 12 {
			// Twelve clients granted k0 in turn, each 10 ms after the last,
			// each lease a second long: every pair overlaps.
			inv := rec.Record(history.Op{Type: history.Invoke, Process: p, F: history.Acquire, Key: "k0", Lease: fmt.Sprintf("p%d.1", p), TTL: int64(time.Second)})
			rec.Record(history.Op{Type: history.OK, Process: p, F: history.Acquire, Key: "k0", Lease: inv.Lease, TTL: inv.TTL, Owner: fmt.Sprintf("token-%d", p)})
			time.Sleep(time.Millisecond)
		}
		rec.Mark(history.PhaseEnd)
		require.NoError(t, rec.Err())
		ops := rec.Ops()
		report := r.judge(ops, nil, "")
		require.Equal(t, checker.Invalid, report.Verdict, report.Reason)
		require.Contains(t, report.Staging, "never injected its fault")
		res, err := r.report(context.Background(), report, len(ops))
		require.NoError(t, err)
		f.Close()
		require.False(t, res.Matches, tc.scenario)
		require.Equal(t, tc.undecided, res.Undecided(), tc.scenario)
		require.Equal(t, tc.contradict, res.Contradicts(), tc.scenario)
		require.Equal(t, report.Staging, res.Staging)
	}
}
