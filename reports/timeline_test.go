package reports

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

// svgShape is one drawn element of the timeline, read back from its SVG.
type svgShape struct {
	tag, class string
	lane       int // -1 above the lanes
	a, b       float64
	title      string
}

// svgElement is one element of a drawing, read back: its tag, its
// attributes and its text.
type svgElement struct {
	tag   string
	attrs map[string]string
	text  string
}

// svgElements parses a drawing's SVG, which must be well-formed XML, into
// its elements in document order; an element's text is all the text
// within it (a shape's is its <title>).
func svgElements(t *testing.T, svg string) []svgElement {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	var out []svgElement
	var open []int // the elements not yet closed, outermost first
	for {
		tok, err := dec.Token()
		if err != nil {
			require.ErrorContains(t, err, "EOF")
			return out
		}
		switch e := tok.(type) {
		case xml.StartElement:
			el := svgElement{tag: e.Name.Local, attrs: map[string]string{}}
			for _, at := range e.Attr {
				el.attrs[at.Name.Local] = at.Value
			}
			out = append(out, el)
			open = append(open, len(out)-1)
		case xml.CharData:
			for _, i := range open {
				out[i].text += string(e)
			}
		case xml.EndElement:
			open = open[:len(open)-1]
		}
	}
}

// shapes reads a timeline's rects and lines back from its SVG.
func shapes(t *testing.T, svg string) []svgShape {
	t.Helper()
	var out []svgShape
	lanesY := -1 // where the lanes begin: the drawing's data-lanes
	for _, el := range svgElements(t, svg) {
		if el.tag == "svg" {
			if v, ok := el.attrs["data-lanes"]; ok {
				lanesY, _ = strconv.Atoi(v)
			}
		}
		if el.tag != "rect" && el.tag != "line" {
			continue
		}
		s := svgShape{tag: el.tag, class: el.attrs["class"], lane: -1, title: el.text}
		y := -1
		for _, k := range []string{"y", "y1"} {
			if v, ok := el.attrs[k]; ok {
				y, _ = strconv.Atoi(v)
			}
		}
		s.a, _ = strconv.ParseFloat(el.attrs["data-a"], 64)
		s.b, _ = strconv.ParseFloat(el.attrs["data-b"], 64)
		require.Positive(t, lanesY, "the drawing says where its lanes begin")
		if y >= lanesY {
			s.lane = (y - lanesY) / tlLane
		}
		out = append(out, s)
	}
	return out
}

func byClass(ss []svgShape, class string) []svgShape {
	var out []svgShape
	for _, s := range ss {
		if s.class == class {
			out = append(out, s)
		}
	}
	return out
}

func TestTimelineMarksTheDoubleHoldOnBothLanesAndThePauseOnItsOwn(t *testing.T) {
	dir, r := runDir(t, t.TempDir(), "s", "20260101T000000.000Z", doubleHold(), "unsafe")
	require.Equal(t, "invalid", r.Verdict)
	d, err := loadRun(dir, r)
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 2}, d.Lanes)
	ss := shapes(t, drawTimeline(d, anomalyID).Body)

	holds := byClass(ss, "hold")
	require.Len(t, holds, 3, "one bar per holding window the checker computed")
	overlaps := byClass(ss, "overlap")
	require.Len(t, overlaps, 2, "the double hold in red on both holders' lanes")
	require.ElementsMatch(t, []int{0, 1}, []int{overlaps[0].lane, overlaps[1].lane})
	for _, o := range overlaps {
		require.InDelta(t, 1.2, o.a, 1e-6, "from the second acquire's ok")
		require.InDelta(t, 1.5, o.b, 1e-6, "to the first release's invocation")
		require.Contains(t, o.title, "double hold")
	}

	faults := byClass(ss, "fault")
	require.Len(t, faults, 1, "the node fault shades every lane; the pause is not a band across them")
	require.Equal(t, -1, faults[0].lane)
	require.InDelta(t, 1.0, faults[0].a, 1e-6)
	require.InDelta(t, 3.0, faults[0].b, 1e-6)
	pauses := byClass(ss, "pause")
	require.Len(t, pauses, 1)
	require.Equal(t, 2, pauses[0].lane, "the pause on the paused process's lane")
	require.InDelta(t, 0.5, pauses[0].a, 1e-6)

	marks := byClass(ss, "anomaly")
	require.Len(t, marks, len(r.Anomalies), "one red mark per anomaly")
}

func TestTimelineOfALegalLookAlikeHasNoRed(t *testing.T) {
	dir, r := runDir(t, t.TempDir(), "s", "20260101T000000.000Z", legalLookAlike(), "safe")
	require.Equal(t, "valid", r.Verdict)
	d, err := loadRun(dir, r)
	require.NoError(t, err)
	ss := shapes(t, drawTimeline(d, anomalyID).Body)
	require.Len(t, byClass(ss, "hold"), 3)
	require.Empty(t, byClass(ss, "overlap"))
	require.Empty(t, byClass(ss, "anomaly"))
	require.Len(t, byClass(ss, "fault"), 1)
	require.Len(t, byClass(ss, "pause"), 1)
}

// A resource anomaly outlines the holds of the leases it names and marks
// the lane of the first.
func TestTimelineBlamesTheLeasesOfAResourceAnomaly(t *testing.T) {
	dir, r := runDir(t, t.TempDir(), "s", "20260101T000000.000Z", legalLookAlike(), "safe")
	r.Anomalies = append(r.Anomalies, anomaly("lost-update", ms(1700), "p1.1", "p0.1"))
	d, err := loadRun(dir, r)
	require.NoError(t, err)
	ss := shapes(t, drawTimeline(d, anomalyID).Body)
	require.Len(t, byClass(ss, "hold blamed"), 2)
	lane := byClass(ss, "anomaly lane")
	require.Len(t, lane, 1)
	require.Equal(t, 1, lane[0].lane, "the lane of the lease named first")
}

func TestTicksShowOnlyTheLevelThatFitsTheZoom(t *testing.T) {
	require.Equal(t, 0.1, tickStep(1000))
	require.Equal(t, 1.0, tickStep(100))
	require.Equal(t, 5.0, tickStep(20))
	s := &svgDoc{pps: 100}
	drawTicks(s, 3, 100)
	out := s.b.String()
	require.Equal(t, 31, strings.Count(out, `class="tick"`), "every 0.1s of 3s")
	require.Equal(t, 27, strings.Count(out, `display="none"`), "only whole seconds show at 100 px/s")
}

// A promotion the harness saw is drawn across every lane and listed with
// the faults in report.md.
func TestTheClustersFailoverIsOnTheTimelineAndInTheReport(t *testing.T) {
	h := &hist{}
	h.fault("isolate-primary", "redis-1", 1000, 3000)
	for _, typ := range []history.Type{history.Invoke, history.OK} {
		h.op(history.Op{Time: ms(2200), Type: typ, Process: history.NemesisProcess, F: history.Failover, Fault: "cluster", Node: "redis-1 -> redis-4"})
	}
	h.acquire(0, "k", "p0.1", 100, 110).release(0, "k", "p0.1", 1500, 1510)
	dir, r := runDir(t, t.TempDir(), "s", "20260101T000000.000Z", h.sorted(), "safe")
	require.Len(t, r.Observed, 1)
	d, err := loadRun(dir, r)
	require.NoError(t, err)
	ss := shapes(t, drawTimeline(d, anomalyID).Body)
	f := byClass(ss, "failover")
	require.Len(t, f, 1)
	require.Equal(t, -1, f[0].lane, "across every lane")
	require.Contains(t, f[0].title, "the cluster promoted: master redis-1 -> redis-4")
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	require.Contains(t, string(md), "- isolate-primary(redis-1): struck at t+1.000s, healed at t+3.000s\n- at t+2.200s the cluster promoted: master redis-1 -> redis-4\n")
}

// Names whose text would overprint at the default zoom stack on rows of
// their own; names apart share the first row.
func TestLabelRowsStackOnlyWhatWouldOverprint(t *testing.T) {
	rows, n := labelRows([]tlLabel{
		{10, "kill(redis-3)"},
		{1.2, "restart(redis-2)"},
		{1.0, "link-cut(link:0:redis-1)"},
	}, 100)
	require.Equal(t, []int{0, 1, 0}, rows, "link-cut and restart 0.2s apart at 100 px/s would overprint; kill, 9s on, does not")
	require.Equal(t, 2, n)

	rows, n = labelRows([]tlLabel{{3, "heal"}, {3, "convergence"}, {8, "settle"}, {12, "end"}}, 100)
	require.Equal(t, []int{0, 1, 0, 0}, rows, "heal and convergence mark one instant")
	require.Equal(t, 2, n)

	rows, n = labelRows([]tlLabel{{1, "heal"}, {1.5, "convergence"}}, 1000)
	require.Equal(t, []int{0, 0}, rows, "zoomed in, they fit side by side")
	require.Equal(t, 1, n)

	rows, n = labelRows(nil, 100)
	require.Empty(t, rows)
	require.Equal(t, 1, n, "an empty row still stands")

	var many []tlLabel
	for range tlMaxRows + 2 {
		many = append(many, tlLabel{0, "pause-node(redis-1)"})
	}
	rows, n = labelRows(many, 100)
	require.Equal(t, tlMaxRows, n, "the rows are bounded")
	require.Equal(t, []int{0, 1, 2, 3, 4, 5, 0, 1}, rows)
}

// svgText is a <text> of the drawing: its class, baseline and words.
type svgText struct {
	class, text string
	y           int
}

func texts(t *testing.T, svg string) []svgText {
	t.Helper()
	var out []svgText
	for _, el := range svgElements(t, svg) {
		if el.tag == "text" {
			y, _ := strconv.Atoi(el.attrs["y"])
			out = append(out, svgText{class: el.attrs["class"], text: el.text, y: y})
		}
	}
	return out
}

// Two faults struck moments apart, and the heal and convergence marked at
// one instant, are named on rows of their own, and the lanes make room.
func TestTimelineNamesDoNotOverprint(t *testing.T) {
	h := &hist{}
	h.fault("link-cut", "link:0:redis-1", 1000, 2500).fault("restart", "redis-2", 1100, 2600)
	for _, ph := range []struct {
		p  history.Phase
		at int64
	}{{history.PhaseFaults, 0}, {history.PhaseHeal, 2600}, {history.PhaseConvergence, 2600}, {history.PhaseSettle, 4000}, {history.PhaseEnd, 6000}} {
		for _, typ := range []history.Type{history.Invoke, history.OK} {
			h.op(history.Op{Time: ms(ph.at), Type: typ, Process: history.NemesisProcess, F: history.PhaseF, Phase: ph.p})
		}
	}
	h.acquire(0, "k", "p0.1", 100, 110).release(0, "k", "p0.1", 1500, 1510).
		acquire(1, "k", "p1.1", 1600, 1610).release(1, "k", "p1.1", 6000, 6010)
	dir, r := runDir(t, t.TempDir(), "s", "20260101T000000.000Z", h.sorted(), "safe")
	d, err := loadRun(dir, r)
	require.NoError(t, err)
	tl := drawTimeline(d, anomalyID)
	y := map[string]int{}
	for _, tx := range texts(t, tl.Body) {
		if tx.class == "faultname" || tx.class == "phasename" {
			y[tx.text] = tx.y
		}
	}
	require.Len(t, y, 6)
	require.Equal(t, y["link-cut(link:0:redis-1)"]+tlRow, y["restart(redis-2)"], "the restart's name under the link cut's")
	require.Equal(t, y["heal"]+tlRow, y["convergence"], "convergence under heal")
	require.Equal(t, y["heal"], y["settle"], "settle, apart from them, on the first row")
	require.Equal(t, y["heal"], y["end"])

	g := tlGeom{faultRows: 2, nameRows: 2}
	require.Contains(t, tl.Body, `data-lanes="`+strconv.Itoa(g.laneY(0))+`"`)
	require.Equal(t, tlGeom{1, 1}.laneY(0)+2*tlRow, g.laneY(0), "the lanes begin two rows lower")
	require.Less(t, y["convergence"], g.laneY(0), "the names stay above the lanes")
	require.Less(t, y["restart(redis-2)"], g.marksY(), "the fault names above the anomaly marks")
	ss := shapes(t, tl.Body)
	require.Len(t, byClass(ss, "hold"), 2)
	require.ElementsMatch(t, []int{0, 1}, []int{byClass(ss, "hold")[0].lane, byClass(ss, "hold")[1].lane})
	require.Contains(t, tl.Labels, `y="`+strconv.Itoa(g.marksY()+11)+`">anomalies`)
}
