package reports

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
)

// A run with faults struck inside operations says how they landed, in
// report.md and report.html; a run without says nothing of them.
func TestStrikesShowInTheReports(t *testing.T) {
	dir, r := runDir(t, t.TempDir(), "s", "20260101T000000.000Z", doubleHold(), "unsafe")
	require.NotContains(t, Markdown(r), "strikes inside operations")
	page, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	require.NoError(t, err)
	require.NotContains(t, string(page), "strikes inside operations")

	r.Stats = checker.Stats{Strikes: 6, StrikesInside: 5, StrikesHit: 4, StrikesLate: 1}
	require.Contains(t, Markdown(r), "| strikes inside operations | 6 (5 inside, 4 hit, 1 late, 0 stuck) |")
	require.NoError(t, WriteHTML(dir, r))
	page, err = os.ReadFile(filepath.Join(dir, HTMLFile))
	require.NoError(t, err)
	require.Contains(t, string(page), `<th>strikes inside operations</th><td colspan="7">6 (5 inside, 4 hit, 1 late, 0 stuck)</td>`)
}
