package reports

import (
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
)

// The lock x failure matrix's pages: matrix.md and matrix.html, one row a
// lock, one column a failure, each cell the verdicts of its runs over the
// seeds, how often they broke the lock, the median damage, and a link to
// every run's report.
const (
	MatrixMarkdownFile = "matrix.md"
	MatrixHTMLFile     = "matrix.html"
)

// The kinds of matrix: the Redlock debate's locks under its failures
// (`deadbolt matrix`), and the audit of lock libraries, one row per
// library version, its columns the failures and the findings
// (`deadbolt audit`). Each writes KIND.md, KIND.html and KIND.json.
const (
	KindMatrix = "matrix"
	KindAudit  = "audit"
)

// MatrixKinds are the kinds a store may hold.
var MatrixKinds = []string{KindMatrix, KindAudit}

// Matrix is what `deadbolt matrix` (or `deadbolt audit`) ran.
type Matrix struct {
	// Kind is KindMatrix ("" too) or KindAudit.
	Kind    string
	Command string // as typed, without --shard
	Started time.Time
	Took    time.Duration
	// Shards are the shards of Of whose runs the store holds: shard 1 of 1
	// unsharded, one shard for --shard i/n, several merged.
	Shards   []int
	Of       int
	Seeds    []uint64
	Locks    []string
	Failures []MatrixFailure
	Cells    []MatrixCell
}

// MatrixFailure is a column.
type MatrixFailure struct {
	Name string `json:"name"`
	What string `json:"what"`
	// Upstream is where a library's tracker records the bug a finding's
	// column reproduces.
	Upstream string `json:"upstream,omitempty"`
}

// Files are the names of the kind's pages: Markdown, HTML, data.
func (m Matrix) Files() (md, html, data string) { return kindFiles(m.Kind) }

func kindFiles(kind string) (md, html, data string) {
	if kind == "" {
		kind = KindMatrix
	}
	return kind + ".md", kind + ".html", kind + ".json"
}

// Title is the pages' heading.
func (m Matrix) Title() string {
	if m.Kind == KindAudit {
		return "Audit of lock libraries: each version under each failure and finding"
	}
	return "Lock x failure matrix"
}

// rowName is what a row is.
func (m Matrix) rowName() string {
	if m.Kind == KindAudit {
		return "library version"
	}
	return "lock"
}

// MatrixError is a run that reached no verdict.
type MatrixError struct {
	Seed   uint64 `json:"seed"`
	Reason string `json:"reason"`
}

func (e MatrixError) String() string { return fmt.Sprintf("seed %d: %s", e.Seed, e.Reason) }

// MatrixCell is one lock under one failure, run once per seed.
type MatrixCell struct {
	Lock, Failure string
	Scenario      string // the scenario that staged it; "" when not applicable
	Expected      string
	NotApplicable string
	Runs          []*Results    // the runs that reached a verdict
	Errors        []MatrixError // runs that reached none
	// Missing counts the seeds' runs this store holds neither: another
	// shard's (CountMissing).
	Missing int
}

// ShownNotApplicable marks n/a, with that evidence, each planned cell all
// of whose runs showed that its failure cannot arise for the lock (a
// release that is one step, a late grant the lock drops: checker's
// notApplicable), and none of whose seeds failed to run.
func (m *Matrix) ShownNotApplicable() {
	for i := range m.Cells {
		c := &m.Cells[i]
		if c.NotApplicable != "" || len(c.Runs) == 0 || len(c.Errors) > 0 {
			continue
		}
		if !slices.ContainsFunc(c.Runs, func(r *Results) bool { return r.NotApplicable == "" }) {
			c.NotApplicable = shownPrefix + c.Runs[0].NotApplicable
		}
	}
}

// shownPrefix begins a cell's n/a that its runs showed, rather than its
// plan.
const shownPrefix = "the runs show it cannot arise: "

// CountMissing sets each applicable cell's Missing: the runs of its seeds
// that it holds neither a result nor an error of.
func (m *Matrix) CountMissing() {
	for i := range m.Cells {
		if c := &m.Cells[i]; c.NotApplicable == "" {
			c.Missing = len(m.Seeds) - len(c.Runs) - len(c.Errors)
		}
	}
}

// ShardNote says which shards' runs a sharded matrix holds ("" unsharded).
func (m Matrix) ShardNote() string {
	if m.Of <= 1 {
		return ""
	}
	var held []string
	for _, i := range m.Shards {
		held = append(held, fmt.Sprint(i))
	}
	if len(m.Shards) == 1 {
		return fmt.Sprintf("Shard %s of %d (--shard %s/%d): the other shards' runs are in their own stores, and `deadbolt report --merge` joins them.", held[0], m.Of, held[0], m.Of)
	}
	var missing []string
	for i := 1; i <= m.Of; i++ {
		if !slices.Contains(m.Shards, i) {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	note := fmt.Sprintf("Shards %s of %d, merged", strings.Join(held, ", "), m.Of)
	if len(missing) > 0 {
		word, their := "shard", "its"
		if len(missing) > 1 {
			word, their = "shards", "their"
		}
		note += fmt.Sprintf("; %s %s not merged: %s runs are missing", word, strings.Join(missing, ", "), their)
	}
	return note + "."
}

// Broke counts the runs whose verdict was invalid, and Judged those with a
// verdict other than unknown.
func (c MatrixCell) Broke() (broke, judged int) {
	for _, r := range c.Runs {
		switch r.Verdict {
		case "invalid":
			broke, judged = broke+1, judged+1
		case "valid":
			judged++
		}
	}
	return broke, judged
}

// Class is the cell's colour: unsafe (some run broke the lock), safe (every
// run judged, none broke it), unknown (no run judged, or some not), n/a.
func (c MatrixCell) Class() string {
	broke, judged := c.Broke()
	switch {
	case c.NotApplicable != "":
		return "na"
	case broke > 0:
		return "unsafe"
	case judged > 0 && judged == len(c.Runs) && len(c.Errors) == 0 && c.Missing == 0:
		return "safe"
	default:
		return "unknown"
	}
}

// Contradicted reports a run whose verdict contradicts a known expectation.
func (c MatrixCell) Contradicted() bool {
	for _, r := range c.Runs {
		if r.Contradicts() {
			return true
		}
	}
	return false
}

// MedianDamage is the median over the cell's runs of the double holds and
// of the lost updates, in words ("-" when both are 0).
func (c MatrixCell) MedianDamage() string {
	med := func(metric string) int64 {
		var xs []int64
		for _, r := range c.Runs {
			xs = append(xs, r.Metric(metric))
		}
		if len(xs) == 0 {
			return 0
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	var parts []string
	if n := med("double_holds"); n > 0 {
		parts = append(parts, checker.Plural(n, "double hold"))
	}
	if n := med("lost_updates"); n > 0 {
		parts = append(parts, checker.Plural(n, "lost update"))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// Summary is the cell in a few words: "unsafe 3/3 · 2 double holds".
func (c MatrixCell) Summary() string {
	if c.NotApplicable != "" {
		return "n/a"
	}
	broke, judged := c.Broke()
	s := fmt.Sprintf("%s %d/%d", c.Class(), broke, judged)
	if n := len(c.Runs) + len(c.Errors) - judged; n > 0 {
		s += fmt.Sprintf(" (+%d unknown)", n)
	}
	if c.Missing > 0 {
		s += fmt.Sprintf(" (+%d in other shards)", c.Missing)
	}
	if d := c.MedianDamage(); d != "-" {
		s += " · " + d
	}
	return s
}

// Expectation says how the cell stands against the known results.
func (c MatrixCell) Expectation() string {
	switch {
	case c.NotApplicable != "":
		return ""
	case c.Expected == "unknown" || c.Expected == "":
		return "not judged before"
	case c.Contradicted():
		return "expected " + c.Expected + ": CONTRADICTED"
	default:
		return "expected " + c.Expected
	}
}

// cell finds lock x failure.
func (m Matrix) cell(lock, failure string) MatrixCell {
	for _, c := range m.Cells {
		if c.Lock == lock && c.Failure == failure {
			return c
		}
	}
	return MatrixCell{Lock: lock, Failure: failure, NotApplicable: "not run"}
}

// link is a run's report, relative to dir.
func link(dir string, r *Results) string {
	p := filepath.Join(r.Dir, HTMLFile)
	if rel, err := relPath(dir, p); err == nil {
		return filepath.ToSlash(rel)
	}
	return p
}

// WriteMatrix writes the kind's pages (matrix.md, matrix.html and
// matrix.json, or audit.*) into dir (the store).
func WriteMatrix(dir string, m Matrix) error {
	if err := writeMatrixFile(dir, m); err != nil {
		return err
	}
	var md strings.Builder
	if err := MatrixMarkdown(&md, m, dir); err != nil {
		return err
	}
	mdFile, htmlFile, _ := m.Files()
	if err := os.WriteFile(filepath.Join(dir, mdFile), []byte(md.String()), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, htmlFile))
	if err != nil {
		return err
	}
	if err := matrixHTML(f, m, dir); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// MatrixMarkdown writes the matrix as a Markdown table, links relative to dir.
func MatrixMarkdown(w io.Writer, m Matrix, dir string) error {
	fmt.Fprintf(w, "# %s\n\n`%s`: %s (%s), %s, %s.\n\n", m.Title(), m.Command, checker.Plural(len(m.Seeds), "seed"), seedList(m.Seeds),
		m.Started.UTC().Format("2006-01-02 15:04 UTC"), m.Took.Round(time.Second))
	if note := m.ShardNote(); note != "" {
		fmt.Fprintf(w, "%s\n\n", note)
	}
	fmt.Fprintln(w, "Each cell: the verdict over the seeds (runs that broke the lock / runs judged), the median damage per run, and each run's report.")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| %s |", m.rowName())
	for _, f := range m.Failures {
		if f.Upstream != "" {
			fmt.Fprintf(w, " [%s](%s) |", f.Name, f.Upstream)
			continue
		}
		fmt.Fprintf(w, " %s |", f.Name)
	}
	fmt.Fprint(w, "\n|---|")
	for range m.Failures {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, lock := range m.Locks {
		fmt.Fprintf(w, "| %s |", lock)
		for _, f := range m.Failures {
			c := m.cell(lock, f.Name)
			text := c.Summary()
			if c.Class() == "unsafe" {
				text = "**" + text + "**"
			}
			if e := c.Expectation(); e != "" {
				text += " (" + e + ")"
			}
			for i, r := range c.Runs {
				text += fmt.Sprintf(" [%d](%s)", i+1, link(dir, r))
			}
			fmt.Fprintf(w, " %s |", text)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, "\n## Failures\n\n")
	for _, f := range m.Failures {
		fmt.Fprintf(w, "- **%s**: %s", f.Name, f.What)
		if f.Upstream != "" {
			fmt.Fprintf(w, " (upstream: %s)", f.Upstream)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, "\n## Cells\n\n")
	for _, c := range m.Cells {
		switch {
		case c.NotApplicable != "":
			fmt.Fprintf(w, "- %s x %s: n/a: %s\n", c.Lock, c.Failure, c.NotApplicable)
		default:
			fmt.Fprintf(w, "- %s x %s: scenario `%s`, %s\n", c.Lock, c.Failure, c.Scenario, c.Summary())
			for _, e := range c.Errors {
				fmt.Fprintf(w, "  - no verdict: %s\n", e)
			}
		}
	}
	return nil
}

func seedList(seeds []uint64) string {
	var s []string
	for _, x := range seeds {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ", ")
}

var matrixTemplate = template.Must(template.New("matrix").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>deadbolt: {{.Title}}</title>
<style>
body{font-family:sans-serif;margin:2em}
table{border-collapse:collapse}
th,td{border:1px solid #999;padding:.4em .6em;vertical-align:top;font-size:14px}
td.unsafe{background:#f4b6b6}
td.safe{background:#bfe5bf}
td.unknown{background:#f3e3a6}
td.na{background:#e6e6e6;color:#666}
.contradicted{font-weight:bold;color:#a00}
a{margin-right:.3em}
</style></head><body>
<h1>{{.Title}}</h1>
<p><code>{{.Command}}</code>: {{.SeedCount}} ({{.SeedList}}), {{.When}}, {{.Took}}.</p>
{{if .ShardNote}}<p>{{.ShardNote}}</p>
{{end}}<p>Each cell: the verdict over the seeds (runs that broke the lock / runs judged), the median damage per run, and each run's report. Red: some run broke the lock; green: every run judged safe; yellow: no verdict; grey: no scenario stages this failure for this lock.</p>
<table><tr><th>{{.RowName}}</th>{{range .Failures}}<th title="{{.What}}">{{if .Upstream}}<a href="{{.Upstream}}">{{.Name}}</a>{{else}}{{.Name}}{{end}}</th>{{end}}</tr>
{{range .Rows}}<tr><th>{{.Lock}}</th>{{range .Cells}}<td class="{{.Class}}" title="{{.Title}}">{{.Summary}}{{if .Expectation}}<br><span{{if .Contradicted}} class="contradicted"{{end}}>{{.Expectation}}</span>{{end}}{{if .Links}}<br>{{range $i, $l := .Links}}<a href="{{$l}}">{{$i}}</a>{{end}}{{end}}</td>{{end}}</tr>
{{end}}</table>
<h2>Failures</h2><ul>{{range .Failures}}<li><b>{{.Name}}</b>: {{.What}}{{if .Upstream}} (upstream: <a href="{{.Upstream}}">{{.Upstream}}</a>){{end}}</li>{{end}}</ul>
</body></html>
`))

type htmlCell struct {
	MatrixCell
	Title string
	Links map[int]string
}

func matrixHTML(w io.Writer, m Matrix, dir string) error {
	type row struct {
		Lock  string
		Cells []htmlCell
	}
	var rows []row
	for _, lock := range m.Locks {
		r := row{Lock: lock}
		for _, f := range m.Failures {
			c := m.cell(lock, f.Name)
			h := htmlCell{MatrixCell: c, Title: c.Scenario, Links: map[int]string{}}
			if c.NotApplicable != "" {
				h.Title = c.NotApplicable
			}
			for i, run := range c.Runs {
				h.Links[i+1] = link(dir, run)
			}
			r.Cells = append(r.Cells, h)
		}
		rows = append(rows, r)
	}
	return matrixTemplate.Execute(w, map[string]any{
		"Command": m.Command, "SeedCount": checker.Plural(len(m.Seeds), "seed"), "SeedList": seedList(m.Seeds),
		"When": m.Started.UTC().Format("2006-01-02 15:04 UTC"), "Took": m.Took.Round(time.Second),
		"Failures": m.Failures, "Rows": rows, "ShardNote": m.ShardNote(), "Title": m.Title(), "RowName": m.rowName(),
	})
}
