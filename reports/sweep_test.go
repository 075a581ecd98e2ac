package reports

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
)

func sweepRun(verdict string, doubleHolds, lost int64) *Results {
	return &Results{Verdict: verdict, Checks: []checker.Result{
		{Checker: "double-holds", Applicable: true, Metrics: map[string]int64{"double_holds": doubleHolds}},
		{Checker: "lost-updates", Applicable: true, Metrics: map[string]int64{"lost_updates": lost}},
	}}
}

// Each point of a sweep says how many of its runs broke the lock out of
// those judged, and each run's damage; the plot is drawn.
func TestSweepTablesAndPlotsTheShareOfRunsThatBrokeTheLock(t *testing.T) {
	dir := t.TempDir()
	s := Sweep{Scenario: "pause-simple", Knob: "pause-ttl", What: "the client pause's length, in TTLs", Command: "deadbolt sweep pause-simple",
		Started: time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC), Took: time.Minute, Seeds: []uint64{1, 2},
		Points: []SweepPoint{
			{Value: 0.5, Runs: []*Results{sweepRun("valid", 0, 0), sweepRun("valid", 0, 0)}},
			{Value: 1, Runs: []*Results{sweepRun("invalid", 0, 3), sweepRun("unknown", 0, 0)}, Errors: []string{"no cluster"}},
			{Value: 2, Runs: []*Results{sweepRun("invalid", 1, 8), sweepRun("invalid", 0, 5)}},
		}}
	share, judged := s.Points[1].Broke()
	require.Equal(t, 1.0, share)
	require.Equal(t, 1, judged, "the unknown run and the run without a verdict are not judged")
	md, svg, err := WriteSweep(dir, s)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "sweep-pause-simple-pause-ttl.md"), md)
	text, err := os.ReadFile(md)
	require.NoError(t, err)
	require.Contains(t, string(text), "| 0.5 | 0% of 2 | 0, 0 | 0 |")
	require.Contains(t, string(text), "| 1 | 100% of 1 | 3, 0 | 2 |")
	require.Contains(t, string(text), "| 2 | 100% of 2 | 9, 5 | 0 |")
	require.Contains(t, string(text), "![sweep-pause-simple-pause-ttl](sweep-pause-simple-pause-ttl.svg)")
	img, err := os.ReadFile(svg)
	require.NoError(t, err)
	require.Contains(t, string(img), "<svg")
	require.Contains(t, string(img), "broke the lock")
}
