package reports

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"

	"github.com/deadbolt-lab/deadbolt/checker"
)

// HTMLFile is the run's page: verdict, anomalies, timeline and plots, with
// everything inline so it opens without a network.
const HTMLFile = "report.html"

//go:embed templates/*.html
var templateFS embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"seconds":  Seconds,
	"lockText": LockText,
	"rerun":    RerunCommand,
	"shell":    ShellQuote,
	"plural":   checker.Plural[int],
	"phases":   func(ps []checker.PhaseSpan) string { return orNone(checker.PhasesText(ps)) },
	"verdictClass": func(v string) string {
		switch v {
		case "valid", "invalid", "unknown":
			return v
		}
		return "unknown"
	},
}).ParseFS(templateFS, "templates/*.html"))

// runPage is what templates/report.html shows.
type runPage struct {
	R         *Results
	Outcome   string
	Damage    string
	NoGrant   string
	Strikes   string
	Anomalies []anomalyRow
	Timeline  timeline
	Body      template.HTML // the timeline's drawing
	Labels    template.HTML // its lane names
	Latency   template.HTML
	Through   template.HTML
	PlotNote  string
	// Model says what linearizability.html shows, empty without the file.
	Model string
	Cut   string
	Lanes int
}

type anomalyRow struct {
	ID, Kind, Key, Text string
	At                  int64
	AtS                 float64
}

// anomalyID is the page anchor of the n-th anomaly.
func anomalyID(n int) string { return fmt.Sprintf("anomaly-%d", n+1) }

// WriteHTML renders dir's report.html from r and the history beside it.
func WriteHTML(dir string, r *Results) error {
	d, err := loadRun(dir, r)
	if err != nil {
		return err
	}
	b, err := renderRun(d, dir)
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, HTMLFile), b)
}

func renderRun(d *runData, dir string) ([]byte, error) {
	r := d.Results
	p := runPage{R: r, Outcome: outcomeWords(r), Damage: Damage(r), NoGrant: NoGrant(r), Strikes: Strikes(r), Lanes: len(d.Lanes)}
	for n, a := range r.Anomalies {
		p.Anomalies = append(p.Anomalies, anomalyRow{ID: anomalyID(n), Kind: a.Kind, Key: a.Key, Text: a.Text, At: a.At, AtS: secs(a.At)})
	}
	p.Timeline = drawTimeline(d, anomalyID)
	p.Body, p.Labels = template.HTML(p.Timeline.Body), template.HTML(p.Timeline.Labels)
	pl, err := drawPlots(d)
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	p.Latency, p.Through, p.PlotNote = template.HTML(pl.Latency), template.HTML(pl.Throughput), pl.Note
	if _, err := os.Stat(filepath.Join(dir, ModelFile)); err == nil {
		p.Model = modelKeys(r)
	}
	if d.Tail.Cut() {
		p.Cut = d.Tail.String()
	}
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, "report.html", p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// modelKeys says which keys porcupine's view shows: the ones the model
// check failed or could not decide, else every key. The check is the one
// whose details name failed or undecided keys (the lease-lock model's).
func modelKeys(r *Results) string {
	for _, c := range r.Checks {
		var keys struct {
			FailedKeys  []string `json:"failed_keys"`
			UnknownKeys []string `json:"unknown_keys"`
		}
		// Details is the checker's own type in a run, a JSON object when
		// read back from results.json: either way its JSON form.
		if b, err := json.Marshal(c.Details); err == nil {
			_ = json.Unmarshal(b, &keys)
		}
		var parts []string
		if len(keys.FailedKeys) > 0 {
			parts = append(parts, "no legal order for "+strings.Join(keys.FailedKeys, ", "))
		}
		if len(keys.UnknownKeys) > 0 {
			parts = append(parts, "undecided: "+strings.Join(keys.UnknownKeys, ", "))
		}
		if len(parts) > 0 {
			return strings.Join(parts, "; ")
		}
	}
	return "every key (all legal)"
}

// writeAtomic replaces path with b, so a reader never sees half a page.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}
