package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/deadbolt-lab/deadbolt/drivers"
	"github.com/deadbolt-lab/deadbolt/explore"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// cmdAudit is `deadbolt audit`: the lock libraries at the versions known
// to build (drivers.Library.Known), each under every failure of the matrix
// in every finding of its own library (scenarios/findings/), and in every
// call column (a fault aimed at its extend, re-acquire or renewal, drawn by
// package explore's generator), written as
// store/audit.md, audit.html and audit.json, one row per library version.
// Its flags, exit codes, shards and merge are the matrix's.
func cmdAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	var f runFlags
	f.register(fs, false)
	var versions []string
	for _, n := range drivers.LibraryNames() {
		l, _ := drivers.GetLibrary(n)
		for _, v := range l.Known {
			versions = append(versions, n+"@"+v)
		}
	}
	failures := append(scenarios.AuditFailures(), explore.CallFailures()...)
	var columns []string
	for _, fl := range failures {
		columns = append(columns, fl.Name)
	}
	fs.Func("libraries", "the rows: library versions, comma-separated (`NAME@VERSION,...`; default: every version known to build, as deadbolt locks lists them)", nameList("library version", &versions))
	fs.Func("faults", "not the audit's: its columns are failures (--failures); --faults names faults, on run", facultyOfRun("audit"))
	fs.Func("failures", "comma-separated failures and findings, the columns (default: every failure of the matrix, every finding, and every call column: a fault aimed at the lock's extend, re-acquire or renewal)", nameList("failure", &columns))
	goMod := fs.String("go-mod", "", "the rows: the lock libraries a Go module's go.mod requires, at the versions it requires (in place of --libraries)")
	var sr seededRuns
	sr.register(fs)
	sr.seeds = 1
	junit := fs.String("junit", "", "write every run as JUnit XML to this file")
	var shard shardFlag
	shard.register(fs, "the audit's runs (cells x seeds)")
	names, err := parse(fs, args)
	if err != nil {
		return err
	}
	librariesSet := false
	fs.Visit(func(fl *flag.Flag) { librariesSet = librariesSet || fl.Name == "libraries" })
	switch {
	case *goMod != "" && librariesSet:
		return badInput("--go-mod and --libraries both choose the rows: give one")
	case *goMod != "":
		if versions, err = drivers.FromGoMod(*goMod); err != nil {
			return badInput("--go-mod: %v", err)
		}
		fmt.Fprintf(stderr, "audit: %s requires %s\n", *goMod, strings.Join(versions, ", "))
	}
	switch {
	case len(names) > 0:
		return badInput("audit takes no scenario names (got %q): --libraries and --failures choose its cells", names)
	case f.target != "":
		return badInput("--target: the audit's failures include node faults, which a deployment of your own does not take")
	}
	for _, v := range versions {
		if !drivers.IsVersioned(v) {
			return badInput("--libraries: %q is no library at a version (NAME@VERSION; see deadbolt locks)", v)
		}
		if _, _, err := drivers.SplitVersioned(v); err != nil {
			return badInput("--libraries: %v", err)
		}
	}
	return runGrid(ctx, grid{kind: reports.KindAudit, args: args, rows: versions, cols: columns,
		failures: failures, cells: func(locks, cols []string, o scenarios.RunOptions) ([]scenarios.MatrixCell, error) {
			return scenarios.CellsOver(failures, locks, cols, o)
		}}, f, sr, shard, *junit, stdout, stderr)
}
