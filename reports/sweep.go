package reports

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/deadbolt-lab/deadbolt/checker"
)

// A sweep's pages: the unsafe window of one failure, measured. For each
// value of the knob that decides the damage, the share of runs that broke
// the lock (a double hold or lost update: verdict invalid) and the damage
// of each run, as sweep-<name>.md and sweep-<name>.svg.

// Sweep is what `deadbolt sweep` ran.
type Sweep struct {
	Scenario, Knob, What, Command string
	Started                       time.Time
	Took                          time.Duration
	Seeds                         []uint64
	Points                        []SweepPoint
}

// SweepPoint is the knob at one value, run once per seed.
type SweepPoint struct {
	Value  float64
	Runs   []*Results
	Errors []string
}

// Broke is the share of the point's runs with a verdict that broke the
// lock, and how many had a verdict (valid or invalid).
func (p SweepPoint) Broke() (share float64, judged int) {
	broke := 0
	for _, r := range p.Runs {
		switch r.Verdict {
		case "invalid":
			broke++
			judged++
		case "valid":
			judged++
		}
	}
	if judged == 0 {
		return 0, 0
	}
	return float64(broke) / float64(judged), judged
}

// damage is what a run cost: its double holds and lost updates.
func damage(r *Results) int64 { return r.Metric("double_holds") + r.Metric("lost_updates") }

// Name is the sweep's file stem.
func (s Sweep) Name() string { return "sweep-" + s.Scenario + "-" + s.Knob }

// WriteSweep writes the sweep's Markdown and SVG into dir and returns
// their paths.
func WriteSweep(dir string, s Sweep) (md, svg string, err error) {
	md, svg = filepath.Join(dir, s.Name()+".md"), filepath.Join(dir, s.Name()+".svg")
	var b strings.Builder
	SweepMarkdown(&b, s, filepath.Base(svg))
	if err := os.WriteFile(md, []byte(b.String()), 0o644); err != nil {
		return "", "", err
	}
	p, err := sweepPlot(s)
	if err != nil {
		return "", "", err
	}
	return md, svg, p.Save(8*vg.Inch, 4*vg.Inch, svg)
}

// SweepMarkdown is the sweep's table, with the plot beside it.
func SweepMarkdown(w io.Writer, s Sweep, svg string) {
	fmt.Fprintf(w, "# %s: %s\n\n`%s`: %s a point (%s), %s, %s.\n\n![%s](%s)\n\n",
		s.Scenario, s.What, s.Command, checker.Plural(len(s.Seeds), "seed"), seedList(s.Seeds), s.Started.UTC().Format("2006-01-02 15:04 UTC"), s.Took.Round(time.Second), s.Name(), svg)
	fmt.Fprintf(w, "| %s | broke the lock | double holds + lost updates per run | no verdict |\n|---|---|---|---|\n", s.Knob)
	for _, p := range s.Points {
		share, judged := p.Broke()
		var per []string
		for _, r := range p.Runs {
			per = append(per, fmt.Sprint(damage(r)))
		}
		fmt.Fprintf(w, "| %g | %.0f%% of %d | %s | %d |\n", p.Value, 100*share, judged, strings.Join(per, ", "), len(p.Errors)+len(p.Runs)-judged)
	}
}

// sweepPlot draws the share of runs that broke the lock (line, left) and
// each run's damage (points, scaled to the largest) against the knob.
func sweepPlot(s Sweep) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: the unsafe window (%s a point)", s.Scenario, checker.Plural(len(s.Seeds), "seed"))
	p.X.Label.Text = s.What
	p.Y.Label.Text = "share of runs that broke the lock; damage / max"
	p.Y.Min, p.Y.Max = 0, 1.05
	p.Add(plotter.NewGrid())
	var shares plotter.XYs
	var dmg plotter.XYs
	var most int64 = 1
	for _, pt := range s.Points {
		for _, r := range pt.Runs {
			most = max(most, damage(r))
		}
	}
	for _, pt := range s.Points {
		share, judged := pt.Broke()
		if judged > 0 {
			shares = append(shares, plotter.XY{X: pt.Value, Y: share})
		}
		for _, r := range pt.Runs {
			dmg = append(dmg, plotter.XY{X: pt.Value, Y: float64(damage(r)) / float64(most)})
		}
	}
	slices.SortFunc(shares, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
	line, points, err := plotter.NewLinePoints(shares)
	if err != nil {
		return nil, err
	}
	line.Color, points.Color = failColorRed, failColorRed
	p.Add(line, points)
	p.Legend.Add("broke the lock (share of runs)", line, points)
	if len(dmg) > 0 {
		sc, err := plotter.NewScatter(dmg)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle.Shape, sc.GlyphStyle.Color = draw.CrossGlyph{}, okColor
		p.Add(sc)
		p.Legend.Add(fmt.Sprintf("a run's double holds + lost updates / %d", most), sc)
	}
	p.Legend.Top = true
	return p, nil
}
