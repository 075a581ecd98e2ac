package checker

import (
	"fmt"
	"strings"

	"github.com/deadbolt-lab/deadbolt/history"
)

// PhaseSpan is one phase of a run as its history marks it (history.Phase):
// from its mark to the next one, the last to the end of the history.
type PhaseSpan struct {
	Phase history.Phase `json:"phase"`
	Start int64         `json:"start"`
	End   int64         `json:"end"`
}

// phaseSpans reads the phase marks among the nemesis's operations.
func phaseSpans(nemesis []history.Op, end int64) []PhaseSpan {
	var out []PhaseSpan
	for _, op := range nemesis {
		if op.F != history.PhaseF || op.Type != history.Invoke {
			continue
		}
		if n := len(out); n > 0 {
			out[n-1].End = op.Time
		}
		out = append(out, PhaseSpan{Phase: op.Phase, Start: op.Time, End: end})
	}
	return out
}

// PhaseAt names the phase that t falls in, "" outside every phase.
func PhaseAt(ps []PhaseSpan, t int64) history.Phase {
	for _, p := range ps {
		if p.Start <= t && t < p.End {
			return p.Phase
		}
	}
	return ""
}

// PhasesText lists the phases with their lengths, as "faults 12.0s, heal
// 1ms, convergence 1.2s, settle 16.0s".
func PhasesText(ps []PhaseSpan) string {
	var parts []string
	for _, p := range ps {
		if p.Phase == history.PhaseEnd {
			continue // the clients finishing: no phase of the experiment
		}
		parts = append(parts, fmt.Sprintf("%s %s", p.Phase, at(p.End-p.Start)))
	}
	return strings.Join(parts, ", ")
}
