package reports

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Rerender writes a stored run's report.md and report.html again from its
// results.json and history.jsonl, without re-checking: the verdict stays
// the one the run reached (`deadbolt check` re-checks).
func Rerender(dir string) (*Results, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	r, err := ReadResults(filepath.Join(dir, ResultsFile))
	if err != nil {
		return nil, fmt.Errorf("%s is not a finished run's directory: %w", dir, err)
	}
	return r, errors.Join(
		writeAtomic(filepath.Join(dir, ReportFile), []byte(Markdown(r))),
		WriteHTML(dir, r),
	)
}

// StoreRoot is the store a run directory belongs to (store/<scenario>/<time>),
// or "" when dir does not sit in that layout.
func StoreRoot(dir string, r *Results) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real // store/latest
	}
	parent := filepath.Dir(abs)
	if filepath.Base(parent) != r.Scenario {
		return ""
	}
	return filepath.Dir(parent)
}
