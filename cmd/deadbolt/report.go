package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/deadbolt-lab/deadbolt/reports"
)

// cmdReport re-renders a stored run's report.md and report.html from its
// results.json and history, then the store's index.html.
func cmdReport(args []string, stdout io.Writer) error {
	fset := flag.NewFlagSet("report", flag.ContinueOnError)
	pos, err := parse(fset, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return badInput("report takes one run directory (store/<scenario>/<time>), got %d arguments", len(pos))
	}
	dir := pos[0]
	if st, err := os.Stat(dir); err != nil {
		return badInput("%v", err)
	} else if !st.IsDir() {
		return badInput("%s is not a run directory (store/<scenario>/<time>)", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, reports.ResultsFile)); err != nil {
		return badInput("%s has no %s: not a finished run's directory (store/<scenario>/<time>)", dir, reports.ResultsFile)
	}
	r, err := reports.Rerender(dir)
	if err != nil {
		// What a run left cannot be read: the run directory is bad input.
		return badInput("%v", err)
	}
	fmt.Fprintf(stdout, "%s: %s (expected %s)\n  %s\n  %s\n", r.Scenario, r.Verdict, r.Expected,
		filepath.Join(dir, reports.ReportFile), filepath.Join(dir, reports.HTMLFile))
	root := reports.StoreRoot(dir, r)
	if root == "" {
		fmt.Fprintf(stdout, "  no index: %s is not in a store's <scenario>/<time> layout\n", dir)
		return nil
	}
	if err := reports.WriteIndex(root); err != nil {
		return fmt.Errorf("index of %s: %w", root, err)
	}
	fmt.Fprintf(stdout, "  %s\n", filepath.Join(root, reports.IndexFile))
	return nil
}
