package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
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
	optionsFile := fs.String("lock-options", "", `a JSON file of the knobs each library runs with, as your project sets them: {"redsync": {"max_retries": "-1"}, "bsm@v0.9.4": {...}} (a library, or a library at a version; deadbolt locks --options LIB@VERSION lists its knobs)`)
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
	knobs, err := readLockOptions(*optionsFile)
	if err != nil {
		return err
	}
	for who := range knobs {
		name, _, _ := strings.Cut(who, "@")
		if _, err := drivers.GetLibrary(name); err != nil {
			return badInput("--lock-options %s: %v", *optionsFile, err)
		}
	}
	return runGrid(ctx, grid{kind: reports.KindAudit, args: args, rows: versions, cols: columns, knobs: knobs,
		failures: failures, cells: func(locks, cols []string, o scenarios.RunOptions) ([]scenarios.MatrixCell, error) {
			return scenarios.CellsOver(failures, locks, cols, o)
		}}, f, sr, shard, *junit, stdout, stderr)
}

// readLockOptions reads an audit's --lock-options file: knobs by library
// (or library at a version), each value a string, a number or a boolean
// as written.
func readLockOptions(path string) (map[string]map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, badInput("--lock-options: %v", err)
	}
	var raw map[string]map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, badInput("--lock-options %s: want an object of libraries, each an object of knobs (%v)", path, err)
	}
	out := map[string]map[string]string{}
	for who, ks := range raw {
		out[who] = map[string]string{}
		for k, v := range ks {
			switch x := v.(type) {
			case string:
				out[who][k] = x
			case float64, bool:
				out[who][k] = fmt.Sprint(x)
			default:
				return nil, badInput("--lock-options %s: %s.%s is %T, want a string, a number or true/false", path, who, k, v)
			}
		}
	}
	return out, nil
}
