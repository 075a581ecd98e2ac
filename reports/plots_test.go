package reports

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// faultShade is how gonum's SVG writes a translucent fill: only the fault
// bands have one.
const faultShade = "fill-opacity:"

func TestPlotsShadeTheFaultWindows(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults bool
	}{{"with faults", true}, {"without", false}} {
		t.Run(tc.name, func(t *testing.T) {
			ops := doubleHold()
			if !tc.faults {
				var kept = ops[:0:0]
				for _, op := range ops {
					if !op.F.IsNemesis() {
						kept = append(kept, op)
					}
				}
				for i := range kept {
					kept[i].Index = i
				}
				ops = kept
			}
			dir, r := runDir(t, t.TempDir(), "s", "20260101T000000.000Z", ops, "unsafe")
			d, err := loadRun(dir, r)
			require.NoError(t, err)
			p, err := drawPlots(d)
			require.NoError(t, err)
			for _, svg := range []string{p.Latency, p.Throughput} {
				require.True(t, strings.HasPrefix(svg, "<svg"), "ready to inline, no XML declaration")
				require.NoError(t, xml.Unmarshal([]byte(svg), new(struct{})), "well-formed")
				require.Equal(t, tc.faults, strings.Contains(svg, faultShade))
			}
			require.Contains(t, p.Latency, "acquire ok")
			require.Contains(t, p.Throughput, "acquires ok")
		})
	}
}
