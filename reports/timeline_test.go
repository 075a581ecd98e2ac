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

// shapes parses a timeline's SVG: it must be well-formed XML.
func shapes(t *testing.T, svg string) []svgShape {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	var out []svgShape
	var open *svgShape
	for {
		tok, err := dec.Token()
		if err != nil {
			require.ErrorContains(t, err, "EOF")
			return out
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if e.Name.Local != "rect" && e.Name.Local != "line" {
				continue
			}
			s := svgShape{tag: e.Name.Local, lane: -1}
			y := -1
			for _, at := range e.Attr {
				switch at.Name.Local {
				case "class":
					s.class = at.Value
				case "y", "y1":
					y, _ = strconv.Atoi(at.Value)
				case "data-a":
					s.a, _ = strconv.ParseFloat(at.Value, 64)
				case "data-b":
					s.b, _ = strconv.ParseFloat(at.Value, 64)
				}
			}
			if y >= laneY(0) {
				s.lane = (y - laneY(0)) / tlLane
			}
			out = append(out, s)
			open = &out[len(out)-1]
		case xml.CharData:
			if open != nil {
				open.title += string(e)
			}
		case xml.EndElement:
			if e.Name.Local == "rect" || e.Name.Local == "line" {
				open = nil
			}
		}
	}
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
	require.Contains(t, string(md), "- isolate-primary(redis-1) from t+1.000s to t+3.000s\n- at t+2.200s the cluster promoted: master redis-1 -> redis-4\n")
}
