package reports

import (
	"encoding/json"
	"errors"
	"fmt"
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

// WriteRun writes results.json, report.md, the model view and report.html
// (drawn from the history.jsonl beside them) into dir.
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
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := WriteHTML(dir, r); err != nil {
		return fmt.Errorf("%s: %w", HTMLFile, err)
	}
	return nil
}
