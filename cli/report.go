package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/reports"
)

// cmdReport re-renders a stored run's report.md and report.html from its
// results.json and history, then the store's index.html.
func cmdReport(args []string, stdout io.Writer) error {
	fset := flag.NewFlagSet("report", flag.ContinueOnError)
	merge := fset.Bool("merge", false, "join the stores given (one per shard, each with its junit.xml) into --out: every run copied, one index.html, one junit.xml, and one matrix when they hold a matrix's shards")
	out := fset.String("out", "", "with --merge: the merged store's directory")
	pos, err := parse(fset, args)
	if err != nil {
		return err
	}
	if *merge {
		return mergeStores(*out, pos, stdout)
	}
	if *out != "" {
		return badInput("--out is --merge's: report RUN_DIR re-renders in place")
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

// mergeStores is `report --merge --out OUT STORE...`: the shards' stores
// joined into one.
func mergeStores(out string, stores []string, stdout io.Writer) error {
	switch {
	case out == "":
		return badInput("report --merge needs --out DIR, the merged store")
	case len(stores) == 0:
		return badInput("report --merge takes the stores to join (one per shard), got none")
	}
	for _, st := range stores {
		if fi, err := os.Stat(st); err != nil || !fi.IsDir() {
			return badInput("report --merge: %s is not a store directory", st)
		}
	}
	if err := reports.CheckMerge(out, stores); err != nil {
		return badInput("report --merge: %v", err)
	}
	merged, err := reports.MergeStores(out, stores)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s of %s merged into %s\n  %s\n  %s\n", checker.Plural(merged.Runs, "run"), checker.Plural(len(stores), "store"), out,
		filepath.Join(out, reports.IndexFile), filepath.Join(out, reports.JUnitFile))
	for _, m := range merged.Matrices {
		md, html, data := m.Files()
		fmt.Fprintf(stdout, "  %s (and %s, %s beside it)\n", filepath.Join(out, html), md, data)
		if note := m.ShardNote(); note != "" {
			fmt.Fprintf(stdout, "%s\n", note)
		}
		if err := printMatrix(stdout, *m); err != nil {
			return err
		}
	}
	return nil
}
