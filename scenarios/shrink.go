package scenarios

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// Shrinking a run: a random schedule that broke a lock struck many faults;
// which of them did it? PlanOf turns the faults a run struck into a plan of
// steps on the concrete targets they hit, each at its moment and for its
// length, and AsPlan makes the scenario strike them; package explore then
// shrinks that scenario as it shrinks its findings (deadbolt shrink).

// PlanOf is the plan of the faults that struck in ops: each fault-start
// that ended ok, After the previous one's strike (the first after the
// fault phase began), For as long as it held until its heal, By its size,
// on the target it struck. A fault that was never healed holds to the end.
func PlanOf(ops []history.Op) ([]nemesis.Step, error) {
	var begin int64 = -1
	type struck struct {
		step nemesis.Step
		at   int64
	}
	var order []string
	byID := map[string]*struck{}
	for _, op := range ops {
		switch {
		case op.F == history.PhaseF && op.Phase == history.PhaseFaults && op.Type == history.OK && begin < 0:
			begin = op.Time
		case op.F == history.FaultStart && op.Type == history.OK && op.FaultID != "":
			if op.Target == "" {
				return nil, fmt.Errorf("fault %s on %s names no target (a history from before deadbolt recorded them)", op.Fault, op.Node)
			}
			s := nemesis.Step{Fault: op.Fault, Target: op.Target, By: time.Duration(op.By)}
			if _, by, ok := strings.Cut(op.Node, " by "); ok && op.By == 0 { // recorded before fault-starts carried By
				d, err := time.ParseDuration(by)
				if err != nil {
					return nil, fmt.Errorf("fault %s on %s: its size: %w", op.Fault, op.Node, err)
				}
				s.By = d
			}
			if op.InOp != nil {
				s.Strikes = 1
			} else if strings.HasPrefix(op.Target, "client:") {
				s = atItsMoment(s, ops, op)
			}
			byID[op.FaultID] = &struck{step: s, at: op.Time}
			order = append(order, op.FaultID)
		case op.F == history.FaultEnd && op.Type == history.Invoke:
			if s, ok := byID[op.FaultID]; ok {
				s.step.For = max(time.Duration(op.Time-s.at), time.Millisecond)
			}
		}
	}
	if len(order) == 0 {
		return nil, errors.New("no fault struck in this run: nothing to shrink")
	}
	prev := max(begin, 0)
	var steps []nemesis.Step
	for _, id := range order {
		s := byID[id]
		s.step.After = time.Duration(s.at - prev)
		prev = s.at
		steps = append(steps, s.step)
	}
	return steps, nil
}

// atItsMoment aims a fault on a client at what that client was doing when
// it struck: a pause that landed between the client's read of the resource
// under its lease of a key and its write strikes the holder of that key at
// its read, so that the plan stages by construction what the random
// schedule hit by timing; one that landed while the client held a key,
// the holder at its grant. Otherwise the step stays on the client's slot.
func atItsMoment(s nemesis.Step, ops []history.Op, start history.Op) nemesis.Step {
	var process int
	if _, err := fmt.Sscanf(start.Node, "process %d", &process); err != nil {
		return s
	}
	var last *history.Op
	for i := range ops {
		op := &ops[i]
		if op.Process != process || op.Time >= start.Time || op.F.IsNemesis() {
			continue
		}
		if last == nil || op.Time >= last.Time {
			last = op
		}
	}
	if last == nil || last.Type != history.OK || last.Key == "" {
		return s
	}
	switch last.F {
	case history.Read:
		s.Target, s.Key, s.On = "holder", last.Key, history.Read
	case history.Acquire:
		s.Target, s.Key = "holder", last.Key
	}
	return s
}

// AsPlan is s striking steps as a plan, its fault phase long enough for
// them: the plan's span, the two seconds Prepare asks, and room for the
// steps to strike later than the run they came from did (drift).
func AsPlan(s Scenario, steps []nemesis.Step) Scenario {
	s.Nemesis, s.Fault = nemesis.PlanSchedule, nemesis.Params{Steps: steps}
	ttl := s.TTL.D()
	phase := max(s.Time.D(), planTime(steps, ttl))
	if slack := phase - planTime(steps, ttl); slack < drift(steps, ttl) {
		phase += drift(steps, ttl) - slack
	}
	s.Time = Duration(phase)
	return s
}

// planTime is the shortest fault phase a plan of steps may have: its span
// and the two seconds Prepare asks beyond it.
func planTime(steps []nemesis.Step, ttl time.Duration) time.Duration {
	p := &nemesis.Plan{Steps: steps}
	return p.Span(ttl) + 2*time.Second
}

// drift is the room a plan's fault phase leaves past its span: a step
// aimed at a holder waits for its moment, and a heal for the cluster's
// health, so the steps strike later than the run they came from did; a
// last step the phase cut off would make the trial unknown. A tenth of the
// span and two TTLs.
func drift(steps []nemesis.Step, ttl time.Duration) time.Duration {
	return planTime(steps, ttl)/10 + 2*ttl
}
