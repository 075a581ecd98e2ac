package reports_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/reports"
)

// The index of a store with long names fits a 1400 px window: no column,
// the links least of all, runs off the page; and its first line links the
// runs that missed their expectation.
func TestIndexFitsTheWindowAndPointsAtTheMisses(t *testing.T) {
	b := browser(t)
	store := t.TempDir()
	for i := range 12 {
		r := reports.Results{Scenario: fmt.Sprintf("pause-in-release-under-a-long-scenario-name-%d", i), Lock: "redlock-with-a-long-adapter-name",
			Seed: uint64(i), Workload: "counter-with-resource", Nemesis: "plan", Expected: "unsafe", Verdict: "invalid", Matches: true}
		if i == 3 {
			r.Verdict, r.Matches = "unknown", false
		}
		dir := filepath.Join(store, r.Scenario, fmt.Sprintf("20260101T0000%02d.000Z", i))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		raw, err := json.Marshal(r)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, reports.ResultsFile), raw, 0o644))
	}
	require.NoError(t, reports.WriteIndex(store))

	var misses int
	var overflow, linksRight, width float64
	got := open(t, b, filepath.Join(store, reports.IndexFile), func(ctx context.Context) error {
		var err error
		if misses, err = count(ctx, "#attention a"); err != nil {
			return err
		}
		if overflow, err = chromedp.Run(ctx, chromedp.Evaluate[float64]("document.documentElement.scrollWidth - window.innerWidth")); err != nil {
			return err
		}
		if width, err = chromedp.Run(ctx, chromedp.Evaluate[float64]("window.innerWidth")); err != nil {
			return err
		}
		linksRight, err = chromedp.Run(ctx, chromedp.Evaluate[float64](
			`Math.max(...[...document.querySelectorAll("td.links")].map(td => td.getBoundingClientRect().right))`))
		return err
	})
	require.Empty(t, got.Errors)
	require.Empty(t, blank(t, got.PNG))
	require.Equal(t, 1, misses, "the one unknown run, linked from the top")
	require.LessOrEqual(t, overflow, 0.0, "the page does not run off the window")
	require.LessOrEqual(t, linksRight, width, "the links column is in the window")
}
