package cli

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// checkJUnit makes sure the --junit file can be written before any
// container starts; "" asks for none.
func checkJUnit(path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return badInput("--junit %s is a directory; give a file name", path)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return badInput("--junit %s: %v", path, err)
	}
	f, err := os.CreateTemp(dir, ".junit-check-*")
	if err != nil {
		return badInput("--junit %s: its directory is not writable: %v", path, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// writeJUnit writes the suite's JUnit file, when one was asked for.
func writeJUnit(path string, suite []scenarios.Scenario, results []*reports.Results, errs []error, started time.Time) error {
	if path == "" {
		return nil
	}
	runs := make([]reports.SuiteRun, len(suite))
	for i, sc := range suite {
		runs[i] = reports.SuiteRun{Name: sc.Name, Results: results[i], Err: errs[i]}
	}
	return writeSuiteJUnit(path, runs, started)
}

// writeSuiteJUnit writes runs as a JUnit file, when one was asked for.
func writeSuiteJUnit(path string, runs []reports.SuiteRun, started time.Time) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(reports.WriteJUnit(f, runs, started, time.Since(started)), f.Close())
}
