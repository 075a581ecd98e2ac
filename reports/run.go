package reports

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"github.com/deadbolt-lab/deadbolt/checker"
)

// Files a run directory holds besides history.jsonl and the node logs.
const (
	ResultsFile = "results.json"
	ReportFile  = "report.md"
	// ModelFile is porcupine's interactive view of the lease-lock check.
	ModelFile = "linearizability.html"
)

// WriteRun writes results.json, report.md and the model view into dir.
func WriteRun(dir string, r *Results, c checker.Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	errs := []error{
		os.WriteFile(filepath.Join(dir, ResultsFile), append(b, '\n'), 0o644),
		os.WriteFile(filepath.Join(dir, ReportFile), []byte(Markdown(r)), 0o644),
	}
	if f, err := os.Create(filepath.Join(dir, ModelFile)); err == nil {
		errs = append(errs, c.WriteVisualization(f), f.Close())
	} else {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
