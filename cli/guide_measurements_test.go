package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// measurement matches what a run measured, as a guide once quoted it: a
// seed's number, "N of M" and "N/M" counts, and ranges of counted things.
// Settings ("seeds (3 by default)", "7-9 s of a 10 s lease") and the
// commands in code do not match.
var measurement = regexp.MustCompile(`\bseeds? \d+|\b\d+ of (?:its |the )?\d+\b|\b\d+/\d+\b|\b\d+-\d+ (?:grants|pairs|times|unavailable|runs)\b`)

// Issue 37: the guide is a guide; seeds and measured counts belong in
// docs/results/, dated and beside their commands, where the guide points.
func TestGuideHoldsNoMeasurements(t *testing.T) {
	text := prose(readDoc(t, filepath.Join(repoRoot(t), "docs", "guide.md")))
	for _, line := range strings.Split(text, "\n") {
		if m := measurement.FindString(line); m != "" {
			t.Errorf("docs/guide.md quotes a measurement (%q): move it to docs/results/ and point there\n\t%s", m, strings.TrimSpace(line))
		}
	}
}
