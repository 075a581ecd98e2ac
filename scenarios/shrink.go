package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// Shrinking: a random schedule that broke a lock struck many faults; which
// of them did it? PlanOf turns the faults a run struck into a plan of
// steps on the concrete targets they hit, each at its moment and for its
// length; Shrink then drops steps, clients and time for as long as the
// smaller scenario still breaks the lock with the same seed (the
// workload's draws are the seed's), and returns the smallest it found.

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
			s := nemesis.Step{Fault: op.Fault, Target: op.Target}
			if _, by, ok := strings.Cut(op.Node, " by "); ok {
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

// Trial runs a candidate scenario and says whether it still broke the lock
// (an invalid verdict). Its error is a run that reached no verdict.
type Trial func(ctx context.Context, s Scenario) (broke bool, err error)

// Shrunk is what Shrink found: the smallest scenario that still broke the
// lock, and how many runs the search took.
type Shrunk struct {
	Scenario Scenario
	Runs     int
}

// ErrNotReproduced: the run's faults as a plan did not break the lock.
var ErrNotReproduced = errors.New("the run's faults, struck again as a plan with its seed, did not break the lock")

// Shrink searches for a smaller scenario than s with steps that still
// breaks the lock, running at most budget trials: first the plan as it
// struck (it must break the lock, or ErrNotReproduced), then without each
// step (the last first: later faults tend to follow the damage), then with
// the fault phase cut to what the plan needs, then with fewer clients
// (halving, down to 2). Each accepted change is kept; log tells each
// trial.
func Shrink(ctx context.Context, s Scenario, steps []nemesis.Step, budget int, try Trial, log func(string, ...any)) (Shrunk, error) {
	best := s
	best.Nemesis, best.Fault = "plan", nemesis.Params{Steps: steps}
	ttl := s.TTL.D()
	phase := max(s.Time.D(), planTime(steps, ttl))
	if slack := phase - planTime(steps, ttl); slack < drift(steps, ttl) {
		phase += drift(steps, ttl) - slack
	}
	best.Time = Duration(phase)
	runs := 0
	attempt := func(c Scenario, what string) (bool, error) {
		if runs >= budget {
			return false, nil
		}
		runs++
		broke, err := try(ctx, c)
		switch {
		case err != nil:
			log("trial %d (%s): no verdict: %v", runs, what, err)
		case broke:
			log("trial %d (%s): still breaks the lock", runs, what)
		default:
			log("trial %d (%s): no longer breaks it", runs, what)
		}
		return broke && err == nil, ctx.Err()
	}
	ok, err := attempt(best, fmt.Sprintf("the %s as struck", checker.Plural(len(steps), "fault")))
	if err != nil {
		return Shrunk{best, runs}, err
	}
	if !ok {
		return Shrunk{best, runs}, ErrNotReproduced
	}
	for i := len(best.Fault.Steps) - 1; i >= 0 && len(best.Fault.Steps) > 1; i-- {
		c := best
		c.Fault.Steps = without(best.Fault.Steps, i)
		if ok, err := attempt(c, fmt.Sprintf("without step %d, %s on %s", i+1, best.Fault.Steps[i].Fault, best.Fault.Steps[i].Target)); err != nil {
			return Shrunk{best, runs}, err
		} else if ok {
			best = c
		}
	}
	if t := planTime(best.Fault.Steps, ttl) + drift(best.Fault.Steps, ttl); t < best.Time.D() {
		c := best
		c.Time = Duration(t)
		if ok, err := attempt(c, "a fault phase of "+t.String()); err != nil {
			return Shrunk{best, runs}, err
		} else if ok {
			best = c
		}
	}
	for n := best.Clients / 2; n >= 2; n /= 2 {
		c := best
		c.Clients = n
		if clientsNeeded(c.Fault.Steps) > n {
			break
		}
		ok, err := attempt(c, fmt.Sprintf("%d clients", n))
		if err != nil {
			return Shrunk{best, runs}, err
		}
		if !ok {
			break
		}
		best = c
	}
	return Shrunk{best, runs}, nil
}

// without is steps less step i, the next one striking when i would have
// plus its own wait.
func without(steps []nemesis.Step, i int) []nemesis.Step {
	out := append([]nemesis.Step(nil), steps[:i]...)
	if i+1 < len(steps) {
		next := steps[i+1]
		next.After += steps[i].After
		out = append(out, next)
		out = append(out, steps[i+2:]...)
	}
	return out
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

// clientsNeeded is one more than the highest client slot a step names.
func clientsNeeded(steps []nemesis.Step) int {
	n := 0
	for _, s := range steps {
		kind, arg, _ := strings.Cut(s.Target, ":")
		if kind != "client" && kind != "link" {
			continue
		}
		slot, _, _ := strings.Cut(arg, ":")
		var k int
		if _, err := fmt.Sscanf(slot, "%d", &k); err == nil {
			n = max(n, k+1)
		}
	}
	return n
}
