package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// matrix.json is the matrix as data: its cells and, for each run, its seed
// and its directory in the store. It is what `deadbolt report --merge`
// rebuilds a matrix from: the runs' own results.json files, read again
// where the merge copied them, so the merged pages link into the merged
// store and show what the runs found, not what a summary said.
const MatrixJSONFile = "matrix.json"

type matrixFile struct {
	// Kind is the matrix's kind (KindMatrix when absent: files written
	// before there was an audit).
	Kind    string        `json:"kind,omitempty"`
	Command string        `json:"command"`
	Started time.Time     `json:"started"`
	Took    time.Duration `json:"took_ns"`
	// Shards of Of this store holds: [1] of 1 unsharded.
	Shards   []int            `json:"shards"`
	Of       int              `json:"of"`
	Seeds    []uint64         `json:"seeds"`
	Locks    []string         `json:"locks"`
	Failures []MatrixFailure  `json:"failures"`
	Cells    []matrixFileCell `json:"cells"`
}

type matrixFileCell struct {
	Lock          string        `json:"lock"`
	Failure       string        `json:"failure"`
	Scenario      string        `json:"scenario,omitempty"`
	Expected      string        `json:"expected,omitempty"`
	NotApplicable string        `json:"not_applicable,omitempty"`
	Runs          []matrixRef   `json:"runs,omitempty"`
	Errors        []MatrixError `json:"errors,omitempty"`
}

// matrixRef is a run with a verdict: its directory relative to the store
// (<scenario>/<time>); the verdict and the report's link are for readers
// of the file, the merge reads the run's results.json.
type matrixRef struct {
	Seed    uint64 `json:"seed"`
	Dir     string `json:"dir"`
	Verdict string `json:"verdict"`
	Report  string `json:"report"`
}

func writeMatrixFile(store string, m Matrix) error {
	f := matrixFile{Kind: m.Kind, Command: m.Command, Started: m.Started, Took: m.Took, Shards: m.Shards, Of: m.Of,
		Seeds: m.Seeds, Locks: m.Locks, Failures: m.Failures}
	for _, c := range m.Cells {
		fc := matrixFileCell{Lock: c.Lock, Failure: c.Failure, Scenario: c.Scenario, Expected: c.Expected,
			NotApplicable: c.NotApplicable, Errors: c.Errors}
		for _, r := range c.Runs {
			rel, err := relPath(store, r.Dir)
			if err != nil || !filepath.IsLocal(rel) {
				return fmt.Errorf("matrix: the run %s is not in the store %s", r.Dir, store)
			}
			fc.Runs = append(fc.Runs, matrixRef{Seed: r.Seed, Dir: filepath.ToSlash(rel), Verdict: r.Verdict, Report: link(store, r)})
		}
		f.Cells = append(f.Cells, fc)
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	_, _, data := m.Files()
	return writeAtomic(filepath.Join(store, data), append(b, '\n'))
}

// readMatrixFile reads store/KIND.json (matrix.json, audit.json); ok is
// false when there is none.
func readMatrixFile(store, kind string) (f matrixFile, ok bool, err error) {
	_, _, data := kindFiles(kind)
	b, err := os.ReadFile(filepath.Join(store, data))
	if os.IsNotExist(err) {
		return f, false, nil
	}
	if err != nil {
		return f, false, err
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, false, fmt.Errorf("%s: not a matrix file: %w", filepath.Join(store, data), err)
	}
	if f.Of < 1 || len(f.Shards) == 0 {
		return f, false, fmt.Errorf("%s: names no shard", filepath.Join(store, data))
	}
	if f.Kind == "" {
		f.Kind = KindMatrix
	}
	if f.Kind != kind {
		return f, false, fmt.Errorf("%s: holds a %s, not a %s", filepath.Join(store, data), f.Kind, kind)
	}
	return f, true, nil
}

// matrix is the file's matrix with every run's results read from
// root/<dir>/results.json, where the run directories are now.
func (f matrixFile) matrix(root string) (Matrix, error) {
	m := Matrix{Kind: f.Kind, Command: f.Command, Started: f.Started, Took: f.Took, Shards: f.Shards, Of: f.Of,
		Seeds: f.Seeds, Locks: f.Locks, Failures: f.Failures}
	for _, fc := range f.Cells {
		c := MatrixCell{Lock: fc.Lock, Failure: fc.Failure, Scenario: fc.Scenario, Expected: fc.Expected,
			NotApplicable: fc.NotApplicable, Errors: fc.Errors}
		for _, ref := range fc.Runs {
			if !filepath.IsLocal(filepath.FromSlash(ref.Dir)) {
				return m, fmt.Errorf("matrix cell %s x %s, seed %d: the run %q is not a directory of the store", fc.Lock, fc.Failure, ref.Seed, ref.Dir)
			}
			dir := filepath.Join(root, filepath.FromSlash(ref.Dir))
			r, err := ReadResults(filepath.Join(dir, ResultsFile))
			if err != nil {
				return m, fmt.Errorf("matrix cell %s x %s, seed %d: %w", fc.Lock, fc.Failure, ref.Seed, err)
			}
			r.Dir = dir
			c.Runs = append(c.Runs, r)
		}
		m.Cells = append(m.Cells, c)
	}
	m.CountMissing()
	return m, nil
}

// relPath is path relative to dir, whether either is absolute or not.
func relPath(dir, path string) (string, error) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.Rel(absDir, abs)
}
