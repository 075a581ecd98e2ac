package reports

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIndexListsEveryRunNewestFirst(t *testing.T) {
	root := t.TempDir()
	runDir(t, root, "failover-simple", "20260101T000000.000Z", doubleHold(), "unsafe")
	runDir(t, root, "expiry-simple", "20260102T000000.000Z", legalLookAlike(), "unsafe")
	// Not runs: an interrupted run without results, a broken results.json,
	// store/latest, store/bench's files.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "crash-simple", "20260103T000000.000Z"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "pause-simple", "20260104T000000.000Z"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "pause-simple", "20260104T000000.000Z", ResultsFile), []byte("{"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join("failover-simple", "20260101T000000.000Z"), filepath.Join(root, "latest")))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "bench"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "bench", "20260101t000000.txt"), []byte("x"), 0o644))

	require.NoError(t, WriteIndex(root))
	b, err := os.ReadFile(filepath.Join(root, IndexFile))
	require.NoError(t, err)
	page := string(b)

	rows := regexp.MustCompile(`(?s)<tr>\s*<td class="time">(.*?)</tr>`).FindAllStringSubmatch(page, -1)
	require.Len(t, rows, 2, "one row per finished run")
	require.Contains(t, rows[0][1], "expiry-simple", "newest first")
	require.Contains(t, rows[0][1], `<span class="verdict valid">valid</span>`)
	require.Contains(t, rows[0][1], `<span class="fail">FAIL</span>`, "valid where unsafe was expected")
	require.Contains(t, rows[1][1], "failover-simple")
	require.Contains(t, rows[1][1], `<span class="verdict invalid">invalid</span>`)
	require.Contains(t, rows[1][1], `<span class="pass">PASS</span>`)
	require.Contains(t, rows[1][1], `href="failover-simple/20260101T000000.000Z/report.html"`)
	require.Contains(t, page, "2 runs in this store (and 1 without results")
	require.Contains(t, page, "pause-simple/20260104T000000.000Z")
	require.Equal(t, 1, strings.Count(page, "1 that did not"))

	// The line at the top points at the one run that missed, and only it.
	attention := regexp.MustCompile(`(?s)<p class="attention" id="attention">(.*?)</p>`).FindStringSubmatch(page)
	require.NotNil(t, attention, "a line points at the failing run")
	require.Less(t, strings.Index(page, "attention"), strings.Index(page, "<table>"), "above the table")
	require.Contains(t, attention[1], "1 of 2 runs needs a look")
	require.Contains(t, attention[1], `href="expiry-simple/20260102T000000.000Z/report.`)
	require.NotContains(t, attention[1], "failover-simple", "a run that passed is not pointed at")
	// The table scrolls inside the page and its links wrap: no cut column.
	require.Contains(t, page, `<div class="runs"><table>`)
	require.Contains(t, page, `<td class="links">`)
}

// A store whose runs all matched has no attention line.
func TestIndexPointsAtNoRunWhenAllMatched(t *testing.T) {
	root := t.TempDir()
	runDir(t, root, "failover-simple", "20260101T000000.000Z", doubleHold(), "unsafe")
	require.NoError(t, WriteIndex(root))
	b, err := os.ReadFile(filepath.Join(root, IndexFile))
	require.NoError(t, err)
	require.NotContains(t, string(b), `id="attention"`)
}
