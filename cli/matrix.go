package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// cmdMatrix runs every lock under every failure over several sr.seeds and
// writes the store's matrix.md and matrix.html (and JUnit, one case a run).
// It exits 1 when a run contradicts a known result, 2 when one reached no
// verdict or an unknown one where the result was known, 0 otherwise: a
// lock nobody judged under a failure reports its verdict and passes.
// --shard i/n runs a slice of the runs (cells x seeds); the store's
// matrix.json lets `deadbolt report --merge` rebuild the whole matrix.
func cmdMatrix(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	var f runFlags
	f.register(fs, false)
	lockNames := scenarios.DebateLocks()
	failureNames := scenarios.FailureNames()
	fs.Func("locks", "comma-separated locks, the rows (default: "+strings.Join(scenarios.DebateLocks(), ",")+")", nameList("lock", &lockNames))
	fs.Func("failures", "comma-separated failures, the columns (default: "+strings.Join(failureNames, ",")+")", nameList("failure", &failureNames))
	fs.Func("faults", "not the matrix's: its columns are failures (--failures); --faults names faults, on run", facultyOfRun("matrix"))
	var sr seededRuns
	sr.register(fs)
	var servers []string
	fs.Func("servers", "comma-separated servers, each lock's row once on each ("+cluster.ServerNames()+"; default: --server's alone)", nameList("server", &servers))
	junit := fs.String("junit", "", "write every run as JUnit XML to this file")
	var shard shardFlag
	shard.register(fs, "the matrix's runs (cells x seeds)")
	names, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(servers) > 0 && f.server != "" {
		return badInput("--server and --servers both pick the servers: give one")
	}
	for _, s := range servers {
		if _, err := cluster.LookupServer(s); err != nil {
			return badInput("--servers: %v", err)
		}
	}
	if len(names) > 0 {
		return badInput("matrix takes no scenario names (got %q): --locks and --failures choose its cells", names)
	}
	if f.target != "" {
		return badInput("--target: the matrix's failures include node faults, which a deployment of your own does not take; run its cells with deadbolt scenario --target")
	}
	return runGrid(ctx, grid{kind: reports.KindMatrix, args: args, rows: lockNames, cols: failureNames, servers: servers,
		failures: scenarios.Failures(), cells: scenarios.Cells}, f, sr, shard, *junit, stdout, stderr)
}

// facultyOfRun refuses --faults on a command whose columns are failures:
// one flag, one meaning (fault names, as run's random schedule takes them).
func facultyOfRun(cmd string) func(string) error {
	return func(string) error {
		return fmt.Errorf("%s's columns are failures (what goes wrong, staged by scenarios): give them with --failures; --faults names faults, which run --nemesis random draws from", cmd)
	}
}

// grid is a matrix to run: its kind, rows (locks), columns (failures) and
// how its cells are made.
type grid struct {
	kind       string
	args       []string
	rows, cols []string
	servers    []string // a servers axis: each row once on each server
	failures   []scenarios.Failure
	cells      func(locks, failures []string, o scenarios.RunOptions) ([]scenarios.MatrixCell, error)
	// knobs are the knobs of library rows an audit's --lock-options file
	// gives, by library (or library at a version).
	knobs map[string]map[string]string
}

// runGrid runs a matrix or an audit: every applicable cell over the seeds,
// its pages written to the store.
func runGrid(ctx context.Context, g grid, f runFlags, sr seededRuns, shard shardFlag, junit string, stdout, stderr io.Writer) error {
	// --lock-option sets the knobs of every row whose lock takes them (a
	// library's), not deadbolt's own locks, which take none.
	knobs := maps.Clone(g.knobs)
	if f.lockOptions != nil {
		if knobs == nil {
			knobs = map[string]map[string]string{}
		}
		knobs[scenarios.AllLibraries] = f.lockOptions
	}
	f.lockOptions = nil
	o := f.options(ctx, stderr)
	o.RowKnobs = knobs
	if err := f.probe(&o); err != nil {
		return err
	}
	cells, err := g.cells(g.rows, g.cols, o)
	if err != nil {
		return badInput("%v", err)
	}
	if len(knobs) > 0 && !slices.ContainsFunc(cells, func(c scenarios.MatrixCell) bool { return len(c.Scenario.LockOptions.Library) > 0 }) {
		return badInput("--lock-option: no row runs a library that takes knobs (deadbolt's own locks take none; deadbolt locks --options LOCK lists a lock's)")
	}
	if len(g.servers) > 0 {
		if cells, err = scenarios.OnServers(cells, g.servers); err != nil {
			return badInput("%v", err)
		}
		g.rows = scenarios.Rows(cells)
	}
	if err := f.checkServer(ctx); err != nil {
		return err
	}
	for _, s := range g.servers {
		if err := checkServerImage(ctx, s); err != nil {
			return err
		}
	}
	if err := checkStore(f.store); err != nil {
		return err
	}
	if err := checkJUnit(junit); err != nil {
		return err
	}
	base := o.Seed
	m := newMatrix(g, base, sr.seeds, shard)
	for _, c := range cells {
		if c.NotApplicable != "" {
			fmt.Fprintf(stderr, "%s x %s: n/a: %s\n", c.Row(), c.Failure, c.NotApplicable)
		}
	}
	// One run per applicable cell and seed, the longest first (runSeeded).
	all := scenarios.MatrixRuns(cells, m.Seeds)
	matrixRuns := all
	if shard.set() {
		matrixRuns = scenarios.ShardRuns(all, shard.i, shard.n)
	}
	runs := make([]scenarios.Scenario, len(matrixRuns))
	runSeeds := make([]uint64, len(matrixRuns))
	for i, r := range matrixRuns {
		runs[i], runSeeds[i] = r.Scenario, r.Seed
	}
	closePool, err := sr.pool(ctx, runs, &o)
	if err != nil {
		return err
	}
	defer closePool()
	fmt.Fprintf(stderr, "%s: %s x %s, %s to run over %s (%d from %d): %s, %d at a time\n",
		g.kind, checker.Plural(len(g.rows), "row"), checker.Plural(len(g.cols), "column"), checker.Plural(len(all)/sr.seeds, "cell"),
		checker.Plural(sr.seeds, "seed"), sr.seeds, base, checker.Plural(len(all), "run"), sr.parallel)
	if shard.set() {
		fmt.Fprintf(stderr, "shard %d/%d: %d of the %s's %s\n", shard.i, shard.n, len(runs), g.kind, checker.Plural(len(all), "run"))
	}
	// Each run re-runs alone as its cell's scenario (TEMPLATE@LOCK) with
	// the options every cell shared; a servers axis adds the cell's.
	o.Invocation = f.invocation("")
	st := newStatus(stderr)
	st.attach(&o)
	m.Started = time.Now()
	results, errs := runSeeded(ctx, runs, runSeeds, sr.parallel, o)
	st.close()
	m.Took = time.Since(m.Started)
	if ctx.Err() != nil {
		return scenarios.ErrInterrupted
	}
	suite, code := fillMatrix(&m, cells, matrixRuns, results, errs)
	if err := reports.WriteMatrix(f.store, m); err != nil {
		return err
	}
	if err := writeSuiteJUnit(junit, suite, m.Started); err != nil {
		return err
	}
	if err := printMatrix(stdout, m); err != nil {
		return err
	}
	md, html, data := m.Files()
	fmt.Fprintf(stdout, "\nthe %s: %s (and %s, %s beside it), %s\n", g.kind, filepath.Join(f.store, html), md, data, m.Took.Round(time.Second))
	for _, line := range undecidedCells(m) {
		fmt.Fprintln(stdout, line)
	}
	if code != exitOK {
		return exitError{code}
	}
	return nil
}

// newMatrix is the page before its runs: the command (without where it
// writes or which shard: what every shard of one run has in common), the
// seeds, rows and columns, and the shard.
func newMatrix(g grid, base uint64, seeds int, shard shardFlag) reports.Matrix {
	m := reports.Matrix{Kind: g.kind, Command: "deadbolt " + strings.Join(append([]string{g.kind}, withoutFlags(g.args, "shard", "store", "junit")...), " "),
		Shards: []int{1}, Of: 1, Locks: g.rows}
	if shard.set() {
		m.Shards, m.Of = []int{shard.i}, shard.n
	}
	for k := range seeds {
		m.Seeds = append(m.Seeds, base+uint64(k))
	}
	for _, fl := range g.failures {
		if slices.Contains(g.cols, fl.Name) {
			m.Failures = append(m.Failures, reports.MatrixFailure{Name: fl.Name, What: fl.Legend(), Upstream: fl.Upstream})
		}
	}
	return m
}

// fillMatrix puts the runs' results (or why a run reached none) in their
// cells; it returns them as JUnit cases, and the exit code: 1 when a run
// contradicts a known result, 2 when one reached no verdict or an unknown
// one where the result was known.
func fillMatrix(m *reports.Matrix, cells []scenarios.MatrixCell, runs []scenarios.MatrixRun, results []*reports.Results, errs []error) ([]reports.SuiteRun, int) {
	for _, c := range cells {
		mc := reports.MatrixCell{Lock: c.Row(), Failure: c.Failure, NotApplicable: c.NotApplicable}
		if c.NotApplicable == "" {
			mc.Scenario, mc.Expected = c.Scenario.Name, string(c.Scenario.Expect)
		}
		m.Cells = append(m.Cells, mc)
	}
	code := exitOK
	var suite []reports.SuiteRun
	for i, run := range runs {
		mc := &m.Cells[run.Cell]
		suite = append(suite, reports.SuiteRun{Name: run.Name(), Results: results[i], Err: errs[i]})
		switch r := results[i]; {
		case errs[i] != nil:
			mc.Errors = append(mc.Errors, reports.MatrixError{Seed: run.Seed, Reason: errs[i].Error()})
			code = max(code, exitUnknown)
		default:
			mc.Runs = append(mc.Runs, r)
			switch {
			case r.Contradicts():
				code = exitContradicts
			case r.Undecided():
				code = max(code, exitUnknown)
			}
		}
	}
	m.ShownNotApplicable()
	m.CountMissing()
	return suite, code
}

// undecidedCells names each cell with a run that reached no answer (no
// verdict, or broken though its staging missed) and why, the first run's
// reason cut short: what makes the exit 2.
func undecidedCells(m reports.Matrix) []string {
	var out []string
	for _, c := range m.Cells {
		if c.NotApplicable != "" {
			continue
		}
		for _, r := range c.Runs {
			if r.Undecided() {
				why := r.Staging
				if why == "" {
					why = r.Reason
				}
				if len(why) > 240 {
					why = why[:240] + "..."
				}
				out = append(out, fmt.Sprintf("undecided: %s x %s, seed %d: %s", c.Lock, c.Failure, r.Seed, why))
				break
			}
		}
		for _, e := range c.Errors {
			out = append(out, fmt.Sprintf("undecided: %s x %s, seed %d: no verdict: %s", c.Lock, c.Failure, e.Seed, e.Reason))
			break
		}
	}
	return out
}

// printMatrix writes the matrix as a table: one row a lock, one column a
// failure, each cell its summary.
func printMatrix(stdout io.Writer, m reports.Matrix) error {
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
	return tw.Flush()
}
