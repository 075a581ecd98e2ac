package reports

import (
	"cmp"
	"fmt"
	"html"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/history"
)

// The timeline is drawn by hand as SVG (no plotting library draws lanes of
// intervals): one lane per client process with the holding windows the
// checker computed, fault windows shaded across every lane, client faults
// (pauses, crashes) on their own lane, and anomalies in red. Every element
// placed in time carries its time in seconds (data-a, and data-b for an
// extent), so the page's script can redraw it at another zoom without
// reading the history again; the server draws it at the default zoom, so
// the page reads without the script too.

// Timeline geometry, in pixels.
const (
	tlAxis    = 20 // tick labels
	tlFaults  = 16 // fault names
	tlMarks   = 14 // anomaly marks
	tlLane    = 16
	tlBar     = 10
	tlPad     = 4
	tlLabelW  = 64 // the fixed column of lane names
	tlFitW    = 1100
	tlMinPPS  = 50    // pixels per second at least, by default
	tlMaxW    = 40000 // widest default drawing
	tlMaxTick = 2000
	// Labels whose text would overprint stack on further rows, each this
	// high, at most tlMaxRows of them; tlCharW is about how wide one
	// character of the 11px labels is.
	tlRow     = 12
	tlMaxRows = 6
	tlCharW   = 6.5
)

// tickLevels are the tick spacings in seconds, each dividing the next, so
// a tick's level (the largest spacing it is a multiple of) says at which
// zooms it shows.
var tickLevels = []float64{0.1, 0.5, 1, 5, 10, 60, 300, 600, 3600}

// keyColors tell keys apart; red is kept for anomalies.
var keyColors = []string{"#4e79a7", "#59a14f", "#9c755f", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#bab0ac"}

// timeline is the drawn timeline and what the page's script needs to zoom it.
type timeline struct {
	// Labels is the fixed column of lane names; Body the scrollable drawing.
	Labels, Body string
	// DurationS and PPS are the drawing's length and default zoom.
	DurationS, PPS float64
	Height         int
	// Keys are the lock keys with their colour, for the legend; when there
	// are more keys than colours the legend says how many instead (KeyCount).
	Keys     []keyColor
	KeyCount int
}

type keyColor struct{ Key, Color string }

// svgDoc collects SVG elements.
type svgDoc struct {
	b   strings.Builder
	pps float64
}

func (s *svgDoc) x(t float64) float64 { return t * s.pps }

func (s *svgDoc) printf(format string, args ...any) { fmt.Fprintf(&s.b, format, args...) }

// rect draws an extent [a, b] seconds with an optional hover title; link,
// when set, makes it a link to that anchor.
func (s *svgDoc) rect(class string, a, b float64, y, h int, title, link string, attrs ...string) {
	if link != "" {
		s.printf(`<a href="#%s">`, link)
	}
	s.printf(`<rect class="%s" x="%.2f" y="%d" width="%.2f" height="%d" data-a="%.6f" data-b="%.6f"%s>`,
		class, s.x(a), y, math.Max(1, s.x(b)-s.x(a)), h, a, b, joinAttrs(attrs))
	if title != "" {
		s.printf(`<title>%s</title>`, html.EscapeString(title))
	}
	s.b.WriteString(`</rect>`)
	if link != "" {
		s.b.WriteString(`</a>`)
	}
}

// mark draws a vertical line at t seconds from y1 to y2.
func (s *svgDoc) mark(class string, t float64, y1, y2 int, title, link string) {
	if link != "" {
		s.printf(`<a href="#%s">`, link)
	}
	s.printf(`<line class="%s" x1="%.2f" x2="%.2f" y1="%d" y2="%d" data-a="%.6f">`, class, s.x(t), s.x(t), y1, y2, t)
	if title != "" {
		s.printf(`<title>%s</title>`, html.EscapeString(title))
	}
	s.b.WriteString(`</line>`)
	if link != "" {
		s.b.WriteString(`</a>`)
	}
}

func (s *svgDoc) text(class string, t float64, y int, body string, attrs ...string) {
	s.printf(`<text class="%s" x="%.2f" y="%d" data-a="%.6f"%s>%s</text>`, class, s.x(t), y, t, joinAttrs(attrs), html.EscapeString(body))
}

func joinAttrs(attrs []string) string {
	if len(attrs) == 0 {
		return ""
	}
	return " " + strings.Join(attrs, " ")
}

func secs(ns int64) float64 { return float64(ns) / 1e9 }

// tlGeom is where the timeline's rows are: the fault names' rows (one
// more for each stack of overprinting names), the anomaly marks with the
// names of the phases and failovers (their rows likewise), then the lanes.
type tlGeom struct{ faultRows, nameRows int }

// marksY is the top of the anomaly marks' row.
func (g tlGeom) marksY() int { return tlAxis + tlFaults + (g.faultRows-1)*tlRow }

// laneY is the top of lane i.
func (g tlGeom) laneY(i int) int { return g.marksY() + tlMarks + (g.nameRows-1)*tlRow + i*tlLane }

// tlLabel is a name drawn from a time on: its text starts at At seconds.
type tlLabel struct {
	At   float64
	Text string
}

// labelRows stacks labels so that no two on one row overprint at pps
// pixels per second (the default zoom: zooming in only spreads them): each
// label, in the order of its time, goes on the first row whose last label
// ends before it begins. rows[i] is label i's row, n the rows used (at
// least 1). Past tlMaxRows a label goes on the row that frees first.
func labelRows(labels []tlLabel, pps float64) (rows []int, n int) {
	order := make([]int, len(labels))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(labels[a].At, labels[b].At) })
	rows = make([]int, len(labels))
	var ends []float64 // the right end of each row's last label, in pixels
	for _, i := range order {
		x := labels[i].At * pps
		row := slices.IndexFunc(ends, func(end float64) bool { return end <= x })
		if row < 0 && len(ends) < tlMaxRows {
			row = len(ends)
			ends = append(ends, 0)
		}
		if row < 0 {
			row = slices.Index(ends, slices.Min(ends))
		}
		rows[i] = row
		ends[row] = max(ends[row], x) + labelWidth(labels[i].Text) // an overprint spreads over the rows
	}
	return rows, max(len(ends), 1)
}

// labelWidth is about how many pixels a label takes: its offset from its
// time (dx), its text, and a gap before the next.
func labelWidth(text string) float64 {
	return 3 + tlCharW*float64(utf8.RuneCountInString(text)) + 4
}

// drawTimeline draws d's timeline. anchors maps an anomaly's index in
// d.Results.Anomalies to its anchor on the page.
func drawTimeline(d *runData, anchor func(i int) string) timeline {
	dur := math.Max(secs(d.In.End), 1)
	pps := math.Max(tlFitW/dur, tlMinPPS)
	pps = math.Min(pps, tlMaxW/dur)
	td := &timelineDraw{d: d, s: &svgDoc{pps: pps}, lane: map[int]int{}}
	td.top(pps)
	laneY := td.g.laneY
	height := laneY(len(d.Lanes)) + tlPad
	td.height = height
	tl := timeline{DurationS: dur, PPS: pps, Height: height}
	for i, p := range d.Lanes {
		td.lane[p] = i
	}
	s := td.s
	width := s.x(dur)
	s.printf(`<svg xmlns="http://www.w3.org/2000/svg" id="timeline" width="%.0f" height="%d" role="img" aria-label="timeline of the run" data-lanes="%d">`, width, height, laneY(0))
	s.b.WriteString(`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
		`<rect width="6" height="6" fill="#e6e0f0"/><line x1="0" y1="0" x2="0" y2="6" stroke="#7b5ea7" stroke-width="3"/></pattern></defs>`)
	for i := range d.Lanes {
		if i%2 == 1 {
			s.rect("stripe", 0, dur, laneY(i), tlLane, "", "")
		}
	}
	drawTicks(s, dur, height)
	td.bands()
	td.clientFaults()
	tl.Keys, tl.KeyCount = td.holds()
	td.outcomes()
	td.anomalies(anchor)
	s.b.WriteString(`</svg>`)
	tl.Body = s.b.String()

	var l strings.Builder
	fmt.Fprintf(&l, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" class="lanes">`, tlLabelW, height)
	fmt.Fprintf(&l, `<text x="4" y="%d">faults</text><text x="4" y="%d">anomalies</text>`, tlAxis+12, td.g.marksY()+11)
	for i, p := range d.Lanes {
		fmt.Fprintf(&l, `<text x="4" y="%d">process %d</text>`, laneY(i)+12, p)
	}
	l.WriteString(`</svg>`)
	tl.Labels = l.String()
	return tl
}

// timelineDraw is one timeline being drawn: the run, the SVG, and where
// each client's lane and each name at the top lie.
type timelineDraw struct {
	d      *runData
	s      *svgDoc
	g      tlGeom
	height int
	lane   map[int]int // process -> lane
	// The names drawn at the top, and the row each takes.
	nodeFaults        []checker.FaultWindow
	phases            []checker.PhaseSpan
	failovers         []checker.Observed
	faultRow, nameRow []int
}

// top finds the names drawn at the top: the faults on nodes and links in
// their band, the phases after the fault phase and the cluster's
// failovers above the lanes. Each set takes a further row wherever its
// names would overprint (labelRows), and the lanes begin lower.
func (td *timelineDraw) top(pps float64) {
	var faultNames, names []tlLabel
	for _, w := range td.d.In.Faults {
		if faultProcess(w) < 0 {
			td.nodeFaults = append(td.nodeFaults, w)
			faultNames = append(faultNames, tlLabel{secs(w.Start), w.Name()})
		}
	}
	for _, ph := range td.d.In.Phases {
		if ph.Phase != history.PhaseFaults {
			td.phases = append(td.phases, ph)
			names = append(names, tlLabel{secs(ph.Start), string(ph.Phase)})
		}
	}
	for _, o := range td.d.In.Observed() {
		if o.F == history.Failover {
			td.failovers = append(td.failovers, o)
			names = append(names, tlLabel{secs(o.At), "failover " + o.What})
		}
	}
	var faultRows, nameRows int
	td.faultRow, faultRows = labelRows(faultNames, pps)
	td.nameRow, nameRows = labelRows(names, pps)
	td.g = tlGeom{faultRows: faultRows, nameRows: nameRows}
}

// bands draws what touches every client: faults on nodes and links as a
// band across all lanes; the phases after the fault phase (heal,
// convergence, settle, end) as a dashed line at each start; and what the
// cluster did by itself, each master switch (a promotion), as a solid
// line; each named at the top.
func (td *timelineDraw) bands() {
	s, height := td.s, td.height
	faultTop := tlAxis
	for i, w := range td.nodeFaults {
		title := w.Name() + ": " + w.Span(Seconds)
		s.rect("fault", secs(w.Start), secs(w.End), faultTop, height-faultTop, title, "")
		s.text("faultname", secs(w.Start), faultTop+12+td.faultRow[i]*tlRow, w.Name(), `dx="3"`)
	}
	nameY := td.g.marksY() + tlMarks - 3
	for i, ph := range td.phases {
		title := fmt.Sprintf("%s from %s to %s", ph.Phase, Seconds(ph.Start), Seconds(ph.End))
		s.mark("phase", secs(ph.Start), tlAxis, height, title, "")
		s.text("phasename", secs(ph.Start), nameY+td.nameRow[i]*tlRow, string(ph.Phase), `dx="3"`)
	}
	for i, o := range td.failovers {
		s.mark("failover", secs(o.At), tlAxis, height, Seconds(o.At)+": "+o.Text(), "")
		s.text("failovername", secs(o.At), nameY+td.nameRow[len(td.phases)+i]*tlRow, "failover "+o.What, `dx="3"`)
	}
}

// clientFaults draws client faults on their lane: a pause (SIGSTOP) as a
// hatched band, a crash (SIGKILL) as a black mark.
func (td *timelineDraw) clientFaults() {
	laneY := td.g.laneY
	for _, w := range td.d.In.Faults {
		p := faultProcess(w)
		i, ok := td.lane[p]
		if p < 0 || !ok {
			continue
		}
		title := w.Name() + ": " + w.Span(Seconds)
		if strings.Contains(w.Fault, "crash") {
			td.s.mark("crash", secs(w.Start), laneY(i), laneY(i)+tlLane, title, "")
			continue
		}
		td.s.rect("pause", secs(w.Start), secs(w.End), laneY(i)+1, tlLane-2, title, "")
	}
}

// holds draws every holding window as a bar in its key's colour, outlined
// in red when an anomaly of the resource names its lease; it returns the
// legend's keys (when every key has a colour of its own) and their count.
func (td *timelineDraw) holds() ([]keyColor, int) {
	d, laneY := td.d, td.g.laneY
	keys := slices.Sorted(maps.Keys(d.In.Holds))
	colorOf := map[string]int{}
	var legend []keyColor
	for i, k := range keys {
		colorOf[k] = i % len(keyColors)
		if len(keys) <= len(keyColors) {
			legend = append(legend, keyColor{k, keyColors[i]})
		}
	}
	blamed := map[string]bool{}
	for _, a := range d.Results.Anomalies {
		if a.Kind != checker.KindDoubleHold {
			for _, l := range a.Leases {
				blamed[l] = true
			}
		}
	}
	for _, k := range keys {
		for _, h := range d.In.Holds[k] {
			i, ok := td.lane[h.Process]
			if !ok {
				continue
			}
			class := "hold"
			if blamed[h.Lease] {
				class += " blamed"
			}
			title := fmt.Sprintf("key %s, lease %s (process %d) held from %s to %s", k, h.Lease, h.Process, Seconds(h.AcquiredAt), Seconds(h.Until))
			if h.Owner != "" {
				title += ", lock token " + h.Owner
			}
			if h.Fence != 0 {
				title += fmt.Sprintf(", fence %d", h.Fence)
			}
			td.s.rect(class, secs(h.AcquiredAt), secs(h.Until), laneY(i)+(tlLane-tlBar)/2, tlBar, title, "",
				fmt.Sprintf(`fill="%s"`, keyColors[colorOf[k]]))
		}
	}
	return legend, len(keys)
}

// outcomes draws unknown outcomes (info) and the resource's writes and
// orders as ticks: a write landing outside every hold is what a pause does.
func (td *timelineDraw) outcomes() {
	laneY := td.g.laneY
	for _, p := range td.d.Pairs {
		inv := p.Invoke
		i, ok := td.lane[inv.Process]
		if !ok {
			continue
		}
		switch {
		case p.Outcome() == history.Info && inv.F.IsLock():
			td.s.mark("info", secs(inv.Time), laneY(i)+1, laneY(i)+tlLane-1,
				fmt.Sprintf("%s of %s on %s: outcome unknown (invoked %s)", inv.F, inv.Lease, inv.Key, Seconds(inv.Time)), "")
		case (inv.F == history.Write || inv.F == history.Order) && p.Outcome() != history.Fail:
			end := inv.Time
			if p.Complete != nil {
				end = p.Complete.Time
			}
			td.s.mark("write", secs(end), laneY(i)+tlLane-5, laneY(i)+tlLane,
				fmt.Sprintf("%s by %s on %s: %s at %s", inv.F, inv.Lease, inv.Key, p.Outcome(), Seconds(end)), "")
		}
	}
}

// anomalies draws a red mark for each anomaly in the anomaly row; a double
// hold's overlap in red on both lanes; a resource anomaly's mark on the
// lane of the lease it names first.
func (td *timelineDraw) anomalies(anchor func(i int) string) {
	d, s, laneY := td.d, td.s, td.g.laneY
	marksY := td.g.marksY()
	for n, a := range d.Results.Anomalies {
		link := anchor(n)
		s.mark("anomaly", secs(a.At), marksY+1, marksY+tlMarks-1, a.Kind+": "+a.Text, link)
		if a.Kind == checker.KindDoubleHold && len(a.Leases) == 2 {
			end := overlapEnd(d.In, a)
			for _, l := range a.Leases {
				if i, ok := td.lane[d.LeaseProcess[l]]; ok {
					s.rect("overlap", secs(a.At), secs(end), laneY(i)+1, tlLane-2, a.Text, link)
				}
			}
			continue
		}
		if len(a.Leases) > 0 {
			if p, ok := d.LeaseProcess[a.Leases[0]]; ok {
				if i, ok := td.lane[p]; ok {
					s.mark("anomaly lane", secs(a.At), laneY(i), laneY(i)+tlLane, a.Kind+": "+a.Text, link)
				}
			}
		}
	}
}

// overlapEnd is where a double hold's overlap ends: the earlier end of the
// two holds that contain its start.
func overlapEnd(in *checker.Input, a checker.Anomaly) int64 {
	end := int64(math.MaxInt64)
	for _, l := range a.Leases {
		for _, h := range in.LeaseHolds(l) {
			if h.AcquiredAt <= a.At && a.At < h.Until {
				end = min(end, h.Until)
			}
		}
	}
	if end == math.MaxInt64 {
		return a.At
	}
	return end
}

// drawTicks draws a tick at every multiple of the finest level that keeps
// their number bounded, each tagged with its level; the ones too dense at
// this zoom are hidden.
func drawTicks(s *svgDoc, dur float64, height int) {
	finest := len(tickLevels) - 1
	for i, step := range tickLevels {
		if dur/step <= tlMaxTick {
			finest = i
			break
		}
	}
	shown := tickStep(s.pps)
	step := tickLevels[finest]
	for n := 0; float64(n)*step <= dur+1e-9; n++ {
		t := math.Round(float64(n)*step*1e6) / 1e6 // 0.3, not 0.30000000000000004
		level := step
		for _, l := range tickLevels[finest:] {
			if isMultiple(t, l) {
				level = l
			}
		}
		hidden := ""
		if level < shown {
			hidden = `display="none"`
		}
		s.printf(`<g class="tick" data-level="%g" %s>`, level, hidden)
		s.mark("grid", t, tlAxis, height, "", "")
		s.text("ticklabel", t, tlAxis-6, fmt.Sprintf("%gs", t), `dx="2"`)
		s.b.WriteString(`</g>`)
	}
}

// tickStep is the finest tick spacing at least 70 pixels apart at pps
// pixels per second; the page's script applies the same rule.
func tickStep(pps float64) float64 {
	for _, l := range tickLevels {
		if l*pps >= 70 {
			return l
		}
	}
	return tickLevels[len(tickLevels)-1]
}

func isMultiple(t, step float64) bool {
	q := t / step
	return math.Abs(q-math.Round(q)) < 1e-6
}
