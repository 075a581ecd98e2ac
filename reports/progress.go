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
	// Settle is how long the workload runs on once the cluster agrees
	// again (the settle phase), at least until Length is over; 0: unknown.
	Settle time.Duration
	// Origin is the history time (ns since the recorder started) of
	// Started: the history's phase marks are placed by it.
	Origin int64

	next     int // index of the next operation to read
	ops      int // completed client operations
	acquires int // ok acquires
	// active are the faults started and not yet healed, by instance, in
	// the order they started.
	active []activeFault
	// phase is the run's phase now, "" before its first mark; phaseAt is
	// the history time of its mark, faultsAt the fault phase's.
	phase             history.Phase
	phaseAt, faultsAt int64
	faultsMarked      bool
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
			p.phase, p.phaseAt = op.Phase, op.Time
			if op.Phase == history.PhaseFaults {
				p.faultsAt, p.faultsMarked = op.Time, true
			}
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
// 1200 ops, 30 acquires, faults: isolate-primary(redis-1)". Past the fault
// phase the run waits on the cluster, not on a clock, and the line says
// when the phase now under way began and how far it is: "16s + heal 2s",
// "17s + convergence 3s", "20s + settle 3s/4s" (the settle's planned
// length), "20s + settle 4s + running on 2s" (a settle that ends with too
// few grants to judge runs on). A fault phase over its time that has not
// healed yet is "16s + faults healing 1s"; one with nothing left to heal,
// "16s + running on 1s".
func (p *Progress) Line(now time.Time) string {
	el := now.Sub(p.Started)
	var when string
	switch rem := p.Length - el; {
	case p.phase != "" && p.phase != history.PhaseFaults:
		began := p.timeOf(p.phaseAt)
		in := now.Sub(began)
		when = fmt.Sprintf("%s + %s ", secondsOf(began.Sub(p.Started)), p.phase)
		if p.phase != history.PhaseSettle || p.Settle <= 0 {
			when += secondsOf(in).String()
			break
		}
		// The settle lasts Settle, and at least to the fault phase's
		// planned end (scenarios.Run).
		faults := p.Origin
		if p.faultsMarked {
			faults = p.faultsAt
		}
		planned := max(p.timeOf(faults).Add(p.Length).Sub(began), p.Settle).Round(time.Second)
		if in <= planned {
			when += fmt.Sprintf("%s/%s", secondsOf(in), secondsOf(planned))
		} else {
			when += fmt.Sprintf("%s + running on %s", secondsOf(planned), secondsOf(in-planned))
		}
	case rem > 0:
		when = fmt.Sprintf("%s/%s (%s left)", secondsOf(el), p.Length, rem.Round(time.Second))
	case len(p.active) > 0:
		when = fmt.Sprintf("%s + faults healing %s", p.Length, secondsOf(-rem))
	default:
		when = fmt.Sprintf("%s + running on %s", p.Length, secondsOf(-rem))
	}
	faults := "none"
	if len(p.active) > 0 {
		names := make([]string, len(p.active))
		for i, a := range p.active {
			names[i] = a.name
		}
		faults = strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s %s, %s, %s, faults: %s",
		p.Scenario, when, checker.Plural(p.ops, "op"), checker.Plural(p.acquires, "acquire"), faults)
}

// timeOf is the wall time of a history time.
func (p *Progress) timeOf(t int64) time.Time { return p.Started.Add(time.Duration(t - p.Origin)) }

// secondsOf is d in whole seconds, as the line shows time.
func secondsOf(d time.Duration) time.Duration { return d.Truncate(time.Second) }
