package reports

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Shards of one matrix (`deadbolt matrix --shard i/n`, the same flags and
// binary on every machine) each leave a matrix.json with every cell and the
// runs they ran; the merge joins their runs into one matrix that equals the
// unsharded run's. Stores of different matrices, or holding one run twice,
// are refused: a merged page must not mix two experiments silently.

// storeMatrix is one store's matrix.json.
type storeMatrix struct {
	store string
	file  matrixFile
}

// readMatrices reads the stores' KIND.json files; a store without one
// holds no matrix of that kind (a suite's shard).
func readMatrices(stores []string, kind string) ([]storeMatrix, error) {
	var out []storeMatrix
	for _, st := range stores {
		f, ok, err := readMatrixFile(st, kind)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, storeMatrix{st, f})
		}
	}
	return out, nil
}

// joinMatrices is the matrix every store's runs make together: the first
// store's command, the earliest start, the longest shard's time (they ran
// side by side), and each cell's runs and errors in seed order.
func joinMatrices(ms []storeMatrix) (matrixFile, error) {
	first := ms[0]
	j := first.file
	j.Shards, j.Cells = nil, slices.Clone(first.file.Cells)
	heldBy := map[int]string{}   // shard -> store
	runBy := map[string]string{} // cell and seed -> store
	for ci := range j.Cells {
		c := &j.Cells[ci]
		c.Runs, c.Errors = nil, nil
		if c.Scenario != "" {
			// A shard's runs showed it n/a: the merged runs decide again.
			c.NotApplicable = ""
		}
	}
	for _, sm := range ms {
		f := sm.file
		if err := sameMatrix(first, sm); err != nil {
			return j, err
		}
		for _, s := range f.Shards {
			if other, dup := heldBy[s]; dup {
				return j, fmt.Errorf("the stores %s and %s both hold shard %d of %d of the matrix: merge each shard's store once", other, sm.store, s, f.Of)
			}
			heldBy[s] = sm.store
			j.Shards = append(j.Shards, s)
		}
		if f.Started.Before(j.Started) {
			j.Started = f.Started
		}
		j.Took = max(j.Took, f.Took)
		for ci, c := range f.Cells {
			claim := func(seed uint64) error {
				if !slices.Contains(f.Seeds, seed) {
					return fmt.Errorf("%s: cell %s x %s holds a run of seed %d, which is not one of its seeds", sm.store, c.Lock, c.Failure, seed)
				}
				key := fmt.Sprintf("%s x %s seed %d", c.Lock, c.Failure, seed)
				if other, dup := runBy[key]; dup {
					return fmt.Errorf("the stores %s and %s both hold the run %s of the matrix", other, sm.store, key)
				}
				runBy[key] = sm.store
				return nil
			}
			for _, r := range c.Runs {
				if err := claim(r.Seed); err != nil {
					return j, err
				}
				j.Cells[ci].Runs = append(j.Cells[ci].Runs, r)
			}
			for _, e := range c.Errors {
				if err := claim(e.Seed); err != nil {
					return j, err
				}
				j.Cells[ci].Errors = append(j.Cells[ci].Errors, e)
			}
		}
	}
	slices.Sort(j.Shards)
	bySeed := func(seed uint64) int { return slices.Index(j.Seeds, seed) }
	for ci := range j.Cells {
		c := &j.Cells[ci]
		slices.SortStableFunc(c.Runs, func(a, b matrixRef) int { return bySeed(a.Seed) - bySeed(b.Seed) })
		slices.SortStableFunc(c.Errors, func(a, b MatrixError) int { return bySeed(a.Seed) - bySeed(b.Seed) })
	}
	return j, nil
}

// sameMatrix says how b's matrix differs from a's, if it does: its split,
// seeds, rows, columns, or a cell's scenario or expectation (another
// binary's tables).
func sameMatrix(a, b storeMatrix) error {
	differ := func(what, x, y string) error {
		return fmt.Errorf("the stores %s and %s hold different matrices: %s %s and %s; merge the shards of one `deadbolt matrix` command", a.store, b.store, what, x, y)
	}
	fa, fb := a.file, b.file
	if fa.Of != fb.Of {
		return differ("split into shards of", fmt.Sprint(fa.Of), fmt.Sprint(fb.Of))
	}
	if !slices.Equal(fa.Seeds, fb.Seeds) {
		return differ("seeds", seedList(fa.Seeds), seedList(fb.Seeds)+" (give every shard the same --seed and --seeds)")
	}
	if !slices.Equal(fa.Locks, fb.Locks) {
		return differ("locks", strings.Join(fa.Locks, ","), strings.Join(fb.Locks, ","))
	}
	names := func(fs []MatrixFailure) string {
		var n []string
		for _, f := range fs {
			n = append(n, f.Name)
		}
		return strings.Join(n, ",")
	}
	if names(fa.Failures) != names(fb.Failures) {
		return differ("failures", names(fa.Failures), names(fb.Failures))
	}
	if len(fa.Cells) != len(fb.Cells) {
		return differ("cells", fmt.Sprint(len(fa.Cells)), fmt.Sprint(len(fb.Cells)))
	}
	for i, ca := range fa.Cells {
		cb := fb.Cells[i]
		// The plan's shape: a cell the runs of the shard that ran it
		// showed n/a is planned alike in the shards that did not.
		shape := func(c matrixFileCell) string {
			if c.Scenario == "" {
				return "n/a"
			}
			return fmt.Sprintf("scenario %s expecting %s", c.Scenario, c.Expected)
		}
		if ca.Lock != cb.Lock || ca.Failure != cb.Failure || shape(ca) != shape(cb) {
			return differ(fmt.Sprintf("cell %s x %s:", ca.Lock, ca.Failure), shape(ca), fmt.Sprintf("%s x %s: %s", cb.Lock, cb.Failure, shape(cb)))
		}
	}
	return nil
}

// checkMatrixMerge finds what would stop the stores' matrices joining into
// out, before anything is copied: see joinMatrices, and out holding a
// matrix of its own.
func checkMatrixMerge(out string, stores []string) error {
	for _, kind := range MatrixKinds {
		ms, err := readMatrices(stores, kind)
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			continue
		}
		if _, _, data := kindFiles(kind); exists(filepath.Join(out, data)) {
			return fmt.Errorf("%s already holds a %s (%s): merge into a directory of its own", out, kind, data)
		}
		if _, err = joinMatrices(ms); err != nil {
			return err
		}
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// mergeMatrix writes out's KIND.md, KIND.html and KIND.json from the
// stores' matrices of that kind, each run read from its copy in out; nil
// when no store holds one.
func mergeMatrix(out string, stores []string, kind string) (*Matrix, error) {
	ms, err := readMatrices(stores, kind)
	if err != nil || len(ms) == 0 {
		return nil, err
	}
	j, err := joinMatrices(ms)
	if err != nil {
		return nil, err
	}
	m, err := j.matrix(out)
	if err != nil {
		return nil, err
	}
	m.ShownNotApplicable()
	if err := WriteMatrix(out, m); err != nil {
		_, _, data := m.Files()
		return nil, fmt.Errorf("%s: %w", filepath.Join(out, data), err)
	}
	return &m, nil
}
