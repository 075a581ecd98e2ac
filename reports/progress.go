package reports

import (
	"fmt"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/history"
)

// Progress follows one run's history as it is recorded and sums it up in
// one line: elapsed and remaining time, operations, acquires, and the
// faults active now. It reads each operation once (Add), in order.
type Progress struct {
	Scenario string
	Started  time.Time
	Length   time.Duration

	next     int // index of the next operation to read
	ops      int // completed client operations
	acquires int // ok acquires
	// active are the faults started and not yet healed, by instance, in
	// the order they started.
	active []activeFault
	// phase is the run's phase now, "" before its first mark.
	phase history.Phase
}

type activeFault struct{ id, name string }

// NewProgress follows a run whose workload started at started and runs for length.
func NewProgress(scenario string, started time.Time, length time.Duration) *Progress {
	return &Progress{Scenario: scenario, Started: started, Length: length}
}

// Acquires is how many of the clients' acquires Add has seen succeed.
func (p *Progress) Acquires() int { return p.acquires }

// Next is the index of the first operation Add has not seen.
func (p *Progress) Next() int { return p.next }

// Add reads the operations recorded since the last call.
func (p *Progress) Add(ops []history.Op) {
	for _, op := range ops {
		p.next = max(p.next, op.Index+1)
		switch {
		case op.Process >= 0 && op.Type.Completes():
			p.ops++
			if op.F == history.Acquire && op.Type == history.OK {
				p.acquires++
			}
		case op.F == history.FaultStart && op.Type == history.Invoke:
			name := op.Fault
			if op.Node != "" {
				name += "(" + op.Node + ")"
			}
			p.active = append(p.active, activeFault{id: op.Fault + " " + op.FaultID, name: name})
		case op.F == history.PhaseF && op.Type == history.Invoke:
			p.phase = op.Phase
		case op.F == history.FaultStart && op.Type == history.Fail,
			op.F == history.FaultEnd && op.Type == history.OK:
			p.heal(op)
		}
	}
}

// heal drops the fault op ends: its instance, or without an instance id
// (older histories) every fault of its name.
func (p *Progress) heal(op history.Op) {
	kept := p.active[:0]
	for _, a := range p.active {
		if a.id == op.Fault+" "+op.FaultID || (op.FaultID == "" && strings.HasPrefix(a.id, op.Fault+" ")) {
			continue
		}
		kept = append(kept, a)
	}
	p.active = kept
}

// Line is the progress at now, as "failover-simple 5s/16s (11s left),
// 1200 ops, 30 acquires, faults: isolate-primary(redis-1)"; past the fault
// phase the parenthesis names the phase (heal, convergence, settle, end).
func (p *Progress) Line(now time.Time) string {
	el := now.Sub(p.Started).Truncate(time.Second)
	left := "workload done"
	switch rem := p.Length - now.Sub(p.Started); {
	case p.phase != "" && p.phase != history.PhaseFaults:
		// Past the fault phase the run waits on the cluster, not a clock.
		left = string(p.phase)
	case rem > 0:
		left = fmt.Sprintf("%s left", rem.Round(time.Second))
	case p.phase == history.PhaseFaults:
		left = "faults healing"
	}
	faults := "none"
	if len(p.active) > 0 {
		names := make([]string, len(p.active))
		for i, a := range p.active {
			names[i] = a.name
		}
		faults = strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s %s/%s (%s), %s, %s, faults: %s",
		p.Scenario, el, p.Length, left, checker.Plural(p.ops, "op"), checker.Plural(p.acquires, "acquire"), faults)
}
