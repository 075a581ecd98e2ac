package scenarios

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/drivers"
	"github.com/deadbolt-lab/deadbolt/internal/suggest"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// The lock x failure matrix: each failure is staged by template scenarios
// (failures.json), from one master to many: a single-master one and a
// RedLock one where both exist. A lock's cell is the last template it can
// run in (Prepare), with the lock in place of the template's (Cell): a
// lock runs over as many independent masters as it can use, as RedLock
// runs over five and not over one Sentinel group. A lock no template fits
// has no cell, and says why.
//
//go:embed failures.json
var failuresJSON []byte

// Failure is a matrix column: what goes wrong, and the scenarios that stage it.
type Failure struct {
	Name      string   `json:"name"`
	What      string   `json:"what"`
	Templates []string `json:"templates"`
	// Judged: only the locks the known-results table judges under the
	// template run in it (a finding's column: its library's versions).
	Judged bool `json:"judged,omitempty"`
	// Upstream is where the library's tracker records a finding's bug.
	Upstream string `json:"upstream,omitempty"`
	// Faults are what its templates strike, by `deadbolt faults`' names,
	// each once: filled from the templates' schedules, never written.
	Faults []string `json:"-"`
	// Draw, for a column with no template, makes its cell's scenario for a
	// lock (package explore's generator draws the audit's call columns);
	// an error says why the lock has no cell there.
	Draw func(lock string, o RunOptions) (Scenario, error) `json:"-"`
}

// Legend says what goes wrong and with which faults.
func (f Failure) Legend() string {
	if len(f.Faults) == 0 {
		return f.What + " (no fault: the lock's own doing)"
	}
	return f.What + " (faults: " + strings.Join(f.Faults, ", ") + ")"
}

// withFaults is fs, each with the faults its templates strike.
func withFaults(fs []Failure) []Failure {
	out := slices.Clone(fs)
	for i := range out {
		out[i].Faults = nil
		for _, t := range out[i].Templates {
			s, err := Get(t)
			if err != nil {
				continue // a test checks every template
			}
			names, err := nemesis.FaultsOf(s.Nemesis, s.Fault)
			if err != nil {
				continue // as Get: registered scenarios are checked
			}
			for _, n := range names {
				if !slices.Contains(out[i].Faults, n) {
					out[i].Faults = append(out[i].Faults, n)
				}
			}
		}
	}
	return out
}

var failures = mustFailures(failuresJSON)

func mustFailures(b []byte) []Failure {
	var fs []Failure
	if err := decodeStrict(b, &fs); err != nil {
		panic(fmt.Sprintf("scenarios: failures.json: %v", err))
	}
	return fs // the templates are registered later (init): a test checks them
}

// Failures are the matrix's columns, in their order, each with the faults
// it strikes.
func Failures() []Failure { return withFaults(failures) }

// FailureNames names the failures, in order.
func FailureNames() []string {
	var out []string
	for _, f := range failures {
		out = append(out, f.Name)
	}
	return out
}

// DebateLocks are the matrix's default rows: the locks that declare
// themselves the Redlock debate's (locks.InDebate), sorted.
func DebateLocks() []string { return locks.Debate() }

// MatrixCell is one lock under one failure: the scenario that stages it,
// or, when no template fits the lock, why not.
type MatrixCell struct {
	Lock, Failure string
	// Server is the server the cell's scenario runs (OnServers); empty: the
	// run's own (--server, or the default).
	Server        string
	Scenario      Scenario // the zero Scenario when NotApplicable says why
	NotApplicable string
}

// Cells are the matrix's cells, row by row (locks) and column by column
// (failures), each judged with o (the driver and its locks) before anything
// starts. An unknown failure or lock is an error.
func Cells(locks, failureNames []string, o RunOptions) ([]MatrixCell, error) {
	return cellsOf(Failures(), locks, failureNames, o)
}

// AuditFailures are the audit's columns: the matrix's failures, then one
// per finding (findings/), where only the versions known.json judges run.
func AuditFailures() []Failure {
	out := Failures()
	for _, n := range Names() {
		s := registry[n]
		if !s.Finding {
			continue
		}
		out = append(out, Failure{Name: n, What: s.Description, Templates: []string{n}, Judged: true, Upstream: s.Upstream})
	}
	return withFaults(out)
}

// AuditCells are Cells over the audit's columns (AuditFailures).
func AuditCells(locks, failureNames []string, o RunOptions) ([]MatrixCell, error) {
	return cellsOf(AuditFailures(), locks, failureNames, o)
}

// CellsOver are Cells over the failures given (the audit's with columns
// drawn by the generator beside them).
func CellsOver(failures []Failure, locks, failureNames []string, o RunOptions) ([]MatrixCell, error) {
	return cellsOf(failures, locks, failureNames, o)
}

// cellsOf is Cells over the failures given.
func cellsOf(failures []Failure, locks, failureNames []string, o RunOptions) ([]MatrixCell, error) {
	byName := map[string]Failure{}
	for _, f := range failures {
		byName[f.Name] = f
	}
	var cols []Failure
	for _, n := range failureNames {
		f, ok := byName[n]
		if !ok {
			return nil, unknownFailure(failures, n)
		}
		cols = append(cols, f)
	}
	cat := o.catalogue()
	var cells []MatrixCell
	for _, lock := range locks {
		rowCat := cat
		if drivers.IsVersioned(lock) {
			lib, err := withLibrary(o, lock, helloOnly) // built (or found) once, its hello read
			if err != nil {
				return nil, err
			}
			rowCat = lib.catalogue()
		} else if err := cat.Lookup(lock); err != nil {
			return nil, err
		}
		var knobs map[string]string
		if ks := rowCat.Knobs(lock); len(ks) > 0 {
			if knobs = o.knobsFor(lock); knobs != nil {
				if _, err := client.ResolveLibrary(ks, client.LockOptions{Library: knobs}); err != nil {
					return nil, fmt.Errorf("lock %s: %w", lock, err)
				}
			}
		}
		for _, f := range cols {
			cell := MatrixCell{Lock: lock, Failure: f.Name}
			if f.Draw != nil {
				c, err := f.Draw(lock, o)
				if err == nil && knobs != nil {
					c.LockOptions.Library, c.Expect = maps.Clone(knobs), Unknown
				}
				if err == nil {
					_, err = c.Prepare(o)
				}
				if err != nil {
					cell.NotApplicable = err.Error()
				} else {
					cell.Scenario = c
				}
				cells = append(cells, cell)
				continue
			}
			var why []string
			for _, t := range slices.Backward(f.Templates) {
				tmpl, err := Get(t)
				if err != nil {
					return nil, fmt.Errorf("failure %s: %w", f.Name, err)
				}
				if f.Judged && Expected(t, lock) == Unknown && !sameLibrary(tmpl.Lock, lock) {
					why = append(why, fmt.Sprintf("%s judges %s's versions only", t, libraryOf(tmpl.Lock)))
					continue
				}
				c := Cell(tmpl, lock)
				if knobs != nil {
					c.LockOptions.Library = maps.Clone(knobs)
					if c.Expect != Unknown {
						c.Expect = Unknown // set up otherwise than the table judged it
					}
				}
				if _, err := c.Prepare(o); err != nil {
					why = append(why, fmt.Sprintf("%s: %v", t, err))
					continue
				}
				cell.Scenario = c
				break
			}
			if cell.Scenario.Name == "" {
				cell.NotApplicable = strings.Join(why, "; ")
			}
			cells = append(cells, cell)
		}
	}
	return cells, nil
}

// sameLibrary reports two locks that are versions of one library
// (redsync@v4.0.3 and redsync@v4.12.1): a finding runs on every version
// of its own library, judged where known.json knows the version and
// reported unjudged elsewhere, so that an audit row says which known bugs
// affect that version.
func sameLibrary(a, b string) bool {
	return drivers.IsVersioned(a) && drivers.IsVersioned(b) && libraryOf(a) == libraryOf(b)
}

// libraryOf is the library of NAME@VERSION.
func libraryOf(lock string) string {
	name, _, _ := strings.Cut(lock, "@")
	return name
}

// unknownFailure says that no failure is named n, and which failures
// strike n when it is a fault's name (`deadbolt faults`).
func unknownFailure(failures []Failure, n string) error {
	var known, striking []string
	for _, f := range failures {
		known = append(known, f.Name)
		if slices.Contains(f.Faults, n) {
			striking = append(striking, f.Name)
		}
	}
	if _, err := nemesis.FaultOf(n); err == nil {
		if len(striking) == 0 {
			return fmt.Errorf("%q is a fault (deadbolt faults), not a failure, and no failure strikes it: a failure is what goes wrong, staged by its templates (known: %s)", n, strings.Join(known, ", "))
		}
		return fmt.Errorf("%q is a fault (deadbolt faults), not a failure: the failures that strike it are %s (known: %s)", n, strings.Join(striking, ", "), strings.Join(known, ", "))
	}
	return fmt.Errorf("unknown failure %q (known: %s)%s", n, strings.Join(known, ", "), suggest.Hint(n, known))
}

// Row names the cell's row: its lock, and its server when the matrix has a
// servers axis ("simple on valkey-8.1").
func (c MatrixCell) Row() string {
	if c.Server == "" {
		return c.Lock
	}
	return c.Lock + " on " + c.Server
}

// OnServers are the cells once per server, row by row (each lock on every
// server in turn, so that a lock's servers stand side by side): each cell's
// scenario runs on its server's image. An unknown server is an error.
func OnServers(cells []MatrixCell, servers []string) ([]MatrixCell, error) {
	var locks []string
	for _, c := range cells {
		if !slices.Contains(locks, c.Lock) {
			locks = append(locks, c.Lock)
		}
	}
	var out []MatrixCell
	for _, lock := range locks {
		for _, srv := range servers {
			img, err := cluster.ServerImage(srv)
			if err != nil {
				return nil, err
			}
			for _, c := range cells {
				if c.Lock != lock {
					continue
				}
				c.Server = srv
				if c.NotApplicable == "" {
					c.Scenario.Cluster.Image = img
				}
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// Rows are the cells' row names, in their order.
func Rows(cells []MatrixCell) []string {
	var rows []string
	for _, c := range cells {
		if !slices.Contains(rows, c.Row()) {
			rows = append(rows, c.Row())
		}
	}
	return rows
}

// MatrixRun is one run of the matrix: a cell's scenario with one seed.
type MatrixRun struct {
	Cell     int // the cell's index in Cells' order
	Scenario Scenario
	Seed     uint64
	Server   string // the cell's Server
}

// Name names the run, as its JUnit case does: "pause-simple seed 3", and
// "pause-simple seed 3 on valkey-8.1" on a servers axis.
func (r MatrixRun) Name() string {
	if r.Server != "" {
		return fmt.Sprintf("%s seed %d on %s", r.Scenario.Name, r.Seed, r.Server)
	}
	return fmt.Sprintf("%s seed %d", r.Scenario.Name, r.Seed)
}

// MatrixRuns are the runs of the applicable cells, one per seed, cell by
// cell: what `--shard i/n` slices (ShardOf, by the scenarios' lengths).
func MatrixRuns(cells []MatrixCell, seeds []uint64) []MatrixRun {
	var runs []MatrixRun
	for ci, c := range cells {
		if c.NotApplicable != "" {
			continue
		}
		for _, seed := range seeds {
			runs = append(runs, MatrixRun{Cell: ci, Scenario: c.Scenario, Seed: seed, Server: c.Server})
		}
	}
	return runs
}

// ShardRuns is shard i of n of the matrix's runs.
func ShardRuns(runs []MatrixRun, i, n int) []MatrixRun {
	return ShardOf(runs, MatrixRun.Name, func(r MatrixRun) time.Duration { return r.Scenario.Length() }, i, n)
}
