package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// cmdMatrix runs every lock under every failure over several sr.seeds and
// writes the store's matrix.md and matrix.html (and JUnit, one case a run).
// It exits 1 when a run contradicts a known result, 2 when one reached no
// verdict or an unknown one where the result was known, 0 otherwise: a
// lock nobody judged under a failure reports its verdict and passes.
func cmdMatrix(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	var f runFlags
	f.register(fs, false)
	lockNames := append([]string(nil), scenarios.DebateLocks...)
	failureNames := scenarios.FailureNames()
	fs.Func("locks", "comma-separated locks, the rows (default: "+strings.Join(scenarios.DebateLocks, ",")+")", nameList("lock", &lockNames))
	fs.Func("faults", "comma-separated failures, the columns (default: "+strings.Join(failureNames, ",")+")", nameList("failure", &failureNames))
	var sr seededRuns
	sr.register(fs)
	junit := fs.String("junit", "", "write every run as JUnit XML to this file")
	names, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(names) > 0 {
		return badInput("matrix takes no scenario names (got %q): --locks and --faults choose its cells", names)
	}
	if f.target != "" {
		return badInput("--target: the matrix's failures include node faults, which a deployment of your own does not take; run its cells with deadbolt scenario --target")
	}
	o := f.options(stderr)
	if err := f.probe(&o); err != nil {
		return err
	}
	cells, err := scenarios.Cells(lockNames, failureNames, o)
	if err != nil {
		return badInput("%v", err)
	}
	if err := checkStore(f.store); err != nil {
		return err
	}
	if err := checkJUnit(*junit); err != nil {
		return err
	}
	base := o.Seed
	m := reports.Matrix{Command: "deadbolt " + strings.Join(append([]string{"matrix"}, args...), " "), Locks: lockNames}
	for k := range sr.seeds {
		m.Seeds = append(m.Seeds, base+uint64(k))
	}
	for _, fl := range scenarios.Failures() {
		for _, n := range failureNames {
			if n == fl.Name {
				m.Failures = append(m.Failures, reports.MatrixFailure{Name: fl.Name, What: fl.What})
			}
		}
	}
	// One run per applicable cell and seed, the longest first (runSeeded).
	var runs []scenarios.Scenario
	var runSeeds []uint64
	var runCell []int
	for ci, c := range cells {
		if c.NotApplicable != "" {
			fmt.Fprintf(stderr, "%s x %s: n/a: %s\n", c.Lock, c.Failure, c.NotApplicable)
			continue
		}
		for _, seed := range m.Seeds {
			runs, runSeeds, runCell = append(runs, c.Scenario), append(runSeeds, seed), append(runCell, ci)
		}
	}
	closePool, err := sr.pool(ctx, runs, &o)
	if err != nil {
		return err
	}
	defer closePool()
	fmt.Fprintf(stderr, "matrix: %d locks x %d failures, %d cells to run over %d seeds (%d from %d): %d runs, %d at a time\n",
		len(lockNames), len(failureNames), len(runs)/sr.seeds, sr.seeds, sr.seeds, base, len(runs), sr.parallel)
	st := newStatus(stderr)
	st.attach(&o)
	m.Started = time.Now()
	results, errs := runSeeded(ctx, runs, runSeeds, sr.parallel, o)
	st.close()
	m.Took = time.Since(m.Started)
	if ctx.Err() != nil {
		return scenarios.ErrInterrupted
	}
	for _, c := range cells {
		mc := reports.MatrixCell{Lock: c.Lock, Failure: c.Failure, NotApplicable: c.NotApplicable}
		if c.NotApplicable == "" {
			mc.Scenario, mc.Expected = c.Scenario.Name, string(c.Scenario.Expect)
		}
		m.Cells = append(m.Cells, mc)
	}
	code := exitOK
	var suite []reports.SuiteRun
	for i := range runs {
		mc := &m.Cells[runCell[i]]
		name := fmt.Sprintf("%s seed %d", runs[i].Name, runSeeds[i])
		suite = append(suite, reports.SuiteRun{Name: name, Results: results[i], Err: errs[i]})
		switch r := results[i]; {
		case errs[i] != nil:
			mc.Errors = append(mc.Errors, fmt.Sprintf("seed %d: %v", runSeeds[i], errs[i]))
			code = max(code, exitUnknown)
		default:
			mc.Runs = append(mc.Runs, r)
			if r.Outcome() == "FAIL" {
				if r.Verdict == "unknown" {
					code = max(code, exitUnknown)
				} else {
					code = exitContradicts
				}
			}
		}
	}
	if err := reports.WriteMatrix(f.store, m); err != nil {
		return err
	}
	if err := writeSuiteJUnit(*junit, suite, m.Started); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "\nLOCK")
	for _, fl := range m.Failures {
		fmt.Fprintf(tw, "\t%s", strings.ToUpper(fl.Name))
	}
	fmt.Fprintln(tw)
	for _, lock := range m.Locks {
		fmt.Fprint(tw, lock)
		for _, fl := range m.Failures {
			for _, c := range m.Cells {
				if c.Lock == lock && c.Failure == fl.Name {
					s := c.Summary()
					if c.Contradicted() {
						s += " CONTRADICTED"
					}
					fmt.Fprintf(tw, "\t%s", s)
				}
			}
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nthe matrix: %s (and %s beside it), %s\n", filepath.Join(f.store, reports.MatrixHTMLFile), reports.MatrixMarkdownFile, m.Took.Round(time.Second))
	if code != exitOK {
		return exitError{code}
	}
	return nil
}
