package reports

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/history"
)

// The latency and throughput plots are gonum/plot's, rendered to SVG and
// inlined in report.html.

// maxPlotPoints bounds a latency plot's points: beyond it every n-th
// operation is drawn (and the caption says so), so a long run's page stays
// light.
const maxPlotPoints = 20000

var (
	plotWidth  = 10 * vg.Inch
	plotHeight = 3.2 * vg.Inch
	faultFill  = color.NRGBA{R: 240, G: 170, B: 40, A: 60}
	pauseFill  = color.NRGBA{R: 123, G: 94, B: 167, A: 40}
	okColor    = color.NRGBA{R: 46, G: 139, B: 87, A: 255}
	failColor  = color.NRGBA{R: 165, G: 165, B: 165, A: 255}
	// failColorRed draws what broke a lock.
	failColorRed = color.NRGBA{R: 200, G: 40, B: 40, A: 255}
	// legendRoom widens the x axis past the run's end, by this fraction,
	// so the legend sits beside the data rather than on it.
	legendRoom = 0.16
)

// series is one kind of operation in the latency plot.
type series struct {
	label string
	color color.Color
	match func(history.Operation) bool
}

// latencySeries are drawn in order: the many failed acquires first, so the
// rarer kinds show on top of them.
var latencySeries = []series{
	{"acquire fail", failColor, func(p history.Operation) bool {
		return p.Invoke.F == history.Acquire && p.Outcome() == history.Fail
	}},
	{"acquire ok", okColor, func(p history.Operation) bool {
		return p.Invoke.F == history.Acquire && p.Outcome() == history.OK
	}},
	{"release", color.NRGBA{R: 78, G: 121, B: 167, A: 255}, func(p history.Operation) bool {
		return p.Invoke.F == history.Release && p.Outcome() != history.Info
	}},
	{"resource", color.NRGBA{R: 176, G: 122, B: 161, A: 255}, func(p history.Operation) bool {
		return p.Invoke.F.IsResource() && p.Outcome() != history.Info
	}},
	{"unknown (info)", color.NRGBA{R: 230, G: 120, B: 20, A: 255}, func(p history.Operation) bool {
		return p.Invoke.Process >= 0 && p.Invoke.F != history.Lost && !p.Invoke.F.IsNemesis() && p.Outcome() == history.Info
	}},
}

// plots are the two inlined SVGs and a note on what they left out.
type plots struct {
	Latency, Throughput string
	Note                string
}

func drawPlots(d *runData) (plots, error) {
	var out plots
	end := secs(d.In.End)
	var clientOps []history.Operation
	for _, p := range d.Pairs {
		if p.Invoke.Process >= 0 && !p.Invoke.F.IsNemesis() && p.Invoke.F != history.Lost && p.Invoke.F != history.Renew {
			clientOps = append(clientOps, p)
		}
	}
	every := max(1, (len(clientOps)+maxPlotPoints-1)/maxPlotPoints)
	if every > 1 {
		out.Note = fmt.Sprintf("The latency plot shows every %d-th of %d operations.", every, len(clientOps))
	}

	lat := newPlot("latency of each operation (at its completion)", "ms, log scale")
	lat.Y.Scale = plot.LogScale{}
	lat.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	lo, hi := math.Inf(1), 0.0
	var scatters []plot.Plotter
	for _, sr := range latencySeries {
		var pts plotter.XYs
		for i, p := range clientOps {
			if i%every != 0 || !sr.match(p) {
				continue
			}
			done := d.In.End // an operation the history never completed
			if p.Complete != nil {
				done = p.Complete.Time
			}
			ms := math.Max(float64(done-p.Invoke.Time)/1e6, 0.01)
			lo, hi = math.Min(lo, ms), math.Max(hi, ms)
			pts = append(pts, plotter.XY{X: secs(done), Y: ms})
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return out, err
		}
		sc.GlyphStyle.Color = sr.color
		sc.GlyphStyle.Radius = vg.Points(1.4)
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		lat.Legend.Add(sr.label, sc)
		scatters = append(scatters, sc)
	}
	if hi == 0 {
		lo, hi = 0.1, 1
	}
	lo, hi = lo/1.5, hi*1.5
	if err := shadeFaults(lat, d.In.Faults, lo, hi); err != nil {
		return out, err
	}
	lat.Add(scatters...)
	lat.X.Min, lat.X.Max, lat.Y.Min, lat.Y.Max = 0, end*(1+legendRoom), lo, hi
	var err error
	if out.Latency, err = renderSVG(lat); err != nil {
		return out, err
	}

	// Throughput: completions per second in bins of a hundredth of the
	// run (at least 100 ms), so a short run still shows a fault's dip.
	bin := math.Max(end/100, 0.1)
	n := int(math.Ceil(end/bin)) + 1
	okAcq, failAcq, all := make([]float64, n), make([]float64, n), make([]float64, n)
	for _, p := range clientOps {
		if p.Complete == nil {
			continue
		}
		i := int(secs(p.Complete.Time) / bin)
		all[i]++
		if p.Invoke.F == history.Acquire {
			switch p.Outcome() {
			case history.OK:
				okAcq[i]++
			case history.Fail:
				failAcq[i]++
			}
		}
	}
	tp := newPlot(fmt.Sprintf("throughput (completions per second, in bins of %s)", binLabel(bin)), "per second")
	top := 1.0
	for _, v := range all {
		top = math.Max(top, v/bin)
	}
	top *= 1.1
	if err := shadeFaults(tp, d.In.Faults, 0, top); err != nil {
		return out, err
	}
	for _, l := range []struct {
		label string
		ys    []float64
		color color.Color
	}{
		{"all operations", all, color.NRGBA{R: 60, G: 60, B: 60, A: 255}},
		{"acquires ok", okAcq, okColor},
		{"acquires failed", failAcq, failColor},
	} {
		pts := make(plotter.XYs, n)
		for i, v := range l.ys {
			pts[i] = plotter.XY{X: (float64(i) + 0.5) * bin, Y: v / bin}
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return out, err
		}
		line.Color, line.Width = l.color, vg.Points(1.2)
		tp.Add(line)
		tp.Legend.Add(l.label, line)
	}
	tp.X.Min, tp.X.Max, tp.Y.Min, tp.Y.Max = 0, end*(1+legendRoom), 0, top
	tp.Y.Tick.Marker = plainTicks{}
	out.Throughput, err = renderSVG(tp)
	return out, err
}

func binLabel(bin float64) string {
	if bin < 1 {
		return fmt.Sprintf("%.0f ms", bin*1000)
	}
	return fmt.Sprintf("%.1f s", bin)
}

func newPlot(title, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "seconds since the run started"
	p.Y.Label.Text = ylabel
	p.Legend.Top = true
	p.Legend.Left = false
	p.Add(plotter.NewGrid())
	for _, t := range []*text{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle, &p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		t.Font.Typeface, t.Font.Variant = "Liberation", "Sans"
	}
	return p
}

type text = draw.TextStyle

// shadeFaults draws each fault window as a band from lo to hi: amber for
// faults on nodes and links, violet for faults on one client.
func shadeFaults(p *plot.Plot, ws []checker.FaultWindow, lo, hi float64) error {
	for _, w := range ws {
		a, b := secs(w.Start), secs(w.End)
		poly, err := plotter.NewPolygon(plotter.XYs{{X: a, Y: lo}, {X: b, Y: lo}, {X: b, Y: hi}, {X: a, Y: hi}})
		if err != nil {
			return err
		}
		poly.Color, poly.LineStyle.Width = faultFill, 0
		if faultProcess(w) >= 0 {
			poly.Color = pauseFill
		}
		p.Add(poly)
	}
	return nil
}

// renderSVG draws p and returns the <svg> element alone, ready to inline:
// no XML declaration, and sized by the page's CSS.
func renderSVG(p *plot.Plot) (string, error) {
	c := vgsvg.NewWith(vgsvg.UseWH(plotWidth, plotHeight))
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("the plotting library wrote no <svg> element")
	}
	return `<svg class="plot" preserveAspectRatio="xMinYMin meet"` + s[i+len("<svg"):], nil
}

// plainTicks are gonum's default ticks labelled without trailing zeros
// ("250", not "250.00").
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', -1, 64)
		}
	}
	return ts
}
