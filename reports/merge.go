package reports

import (
	"cmp"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// Shards of a suite (`deadbolt scenario --shard i/n`) or of a matrix
// (`deadbolt matrix --shard i/n`) run on separate machines, each into a
// store of its own; merging joins the stores into one: every run directory
// copied, one index.html, one JUnit file, and one matrix when the stores
// hold one (matrixmerge.go).

// JUnitFile is where a shard's JUnit file is looked for in its store, and
// where the merged one is written.
const JUnitFile = "junit.xml"

// CheckMerge finds what would stop a merge of stores into out, before
// anything is copied: a store that is not one (or has no JUnit file), out
// inside a store, two stores with one run directory, or out holding it,
// and matrices that do not join (checkMatrixMerge).
func CheckMerge(out string, stores []string) error {
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	seen := map[string]string{}
	for _, st := range stores {
		abs, err := filepath.Abs(st)
		if err != nil {
			return err
		}
		if rel, err := filepath.Rel(abs, absOut); err == nil && (rel == "." || filepath.IsLocal(rel)) {
			return fmt.Errorf("the merged store %s is inside the store %s: give a directory of its own", out, st)
		}
		if _, err := os.Stat(filepath.Join(st, JUnitFile)); err != nil {
			return fmt.Errorf("%s has no %s: run its shard with --junit %s", st, JUnitFile, filepath.Join(st, JUnitFile))
		}
		dirs, err := runDirs(st)
		if err != nil {
			return err
		}
		for _, d := range dirs {
			if other, dup := seen[d.Rel]; dup {
				return fmt.Errorf("the stores %s and %s both hold the run %s", other, st, d.Rel)
			}
			seen[d.Rel] = st
			if _, err := os.Stat(filepath.Join(out, d.Rel)); err == nil {
				return fmt.Errorf("%s already holds the run %s of %s", out, d.Rel, st)
			}
		}
	}
	return checkMatrixMerge(out, stores)
}

// Merged is what a merge wrote: how many runs it copied, and the merged
// matrices (a matrix, an audit) the stores held shards of.
type Merged struct {
	Runs     int
	Matrices []*Matrix
}

// MergeStores copies every run directory of the stores into out
// (<scenario>/<time>/, as they were), writes out/junit.xml from the
// stores' JUnit files, out's matrix from the stores' matrices (if any) and
// rebuilds out/index.html. CheckMerge first.
func MergeStores(out string, stores []string) (Merged, error) {
	if err := CheckMerge(out, stores); err != nil {
		return Merged{}, err
	}
	runs, err := copyRuns(out, stores)
	if err != nil {
		return Merged{Runs: runs}, err
	}
	merged := Merged{Runs: runs}
	for _, kind := range MatrixKinds {
		m, err := mergeMatrix(out, stores, kind)
		if err != nil {
			return merged, err
		}
		if m != nil {
			merged.Matrices = append(merged.Matrices, m)
		}
	}
	return merged, nil
}

// copyRuns copies the stores' runs into out, joins their JUnit files and
// rebuilds out's index.
func copyRuns(out string, stores []string) (runs int, err error) {
	var junits []string
	for _, st := range stores {
		dirs, err := runDirs(st)
		if err != nil {
			return runs, err
		}
		for _, d := range dirs {
			if err := os.CopyFS(filepath.Join(out, d.Rel), os.DirFS(filepath.Join(st, d.Rel))); err != nil {
				return runs, fmt.Errorf("copy %s: %w", filepath.Join(st, d.Rel), err)
			}
			runs++
		}
		junits = append(junits, filepath.Join(st, JUnitFile))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return runs, err
	}
	f, err := os.Create(filepath.Join(out, JUnitFile))
	if err != nil {
		return runs, err
	}
	if err := errors.Join(MergeJUnit(f, junits), f.Close()); err != nil {
		return runs, err
	}
	return runs, WriteIndex(out)
}

// MergeJUnit joins JUnit files written by WriteJUnit into one suite: every
// case, sorted by name (shards finish in any order), the counts summed,
// the earliest start, and the longest shard's time (they ran side by side).
func MergeJUnit(w io.Writer, files []string) error {
	merged := junitSuite{Name: "deadbolt scenarios"}
	var longest float64
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var doc junitSuites
		if err := xml.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: not a JUnit file: %w", path, err)
		}
		for _, s := range doc.Suites {
			merged.Cases = append(merged.Cases, s.Cases...)
			merged.Tests += s.Tests
			merged.Failures += s.Failures
			merged.Errors += s.Errors
			merged.Skipped += s.Skipped
			if t, err := strconv.ParseFloat(s.Time, 64); err == nil {
				longest = max(longest, t)
			}
			if merged.Timestamp == "" || (s.Timestamp != "" && s.Timestamp < merged.Timestamp) {
				merged.Timestamp = s.Timestamp
			}
		}
	}
	slices.SortStableFunc(merged.Cases, func(a, b junitCase) int { return cmp.Compare(a.Name, b.Name) })
	merged.Time = fmt.Sprintf("%.3f", longest)
	return encodeJUnit(w, merged)
}
