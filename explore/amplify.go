package explore

import (
	"slices"
	"time"

	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// Amplifying a finding that broke the lock on some seeds and not on all.
// Many lock bugs need a race to go one way (a retried command that lands
// late, a renewal on a connection whose script cache is cold), so one
// strike breaks the lock on one seed and not the next. Before the finding
// is given up, the same faults are tried stronger: struck three times,
// then larger (twice the delay, twice the clock jump), then both. The
// first that breaks the lock on every seed (and leaves the second lock
// unbroken) is confirmed and shrunk; the shrink may take the strength
// back off where it is not needed.

// amplifyRepeats is how many times a plan's steps strike when repeated.
const amplifyRepeats = 3

// Amplified are stronger versions of a plan scenario s, the mildest
// first, each named by the change it makes; none when s is no plan.
func Amplified(s scenarios.Scenario) []Amplification {
	if s.Nemesis != nemesis.PlanSchedule || len(s.Fault.Steps) == 0 {
		return nil
	}
	var out []Amplification
	repeated := repeatSteps(s, amplifyRepeats)
	out = append(out, Amplification{Change: "the faults struck 3 times", Scenario: repeated})
	if larger, ok := largerSteps(s); ok {
		out = append(out, Amplification{Change: "the faults twice as large", Scenario: larger})
		both, _ := largerSteps(repeated)
		out = append(out, Amplification{Change: "the faults struck 3 times, twice as large", Scenario: both})
	}
	return out
}

// Amplification is a stronger scenario and what made it so.
type Amplification struct {
	Change   string
	Scenario scenarios.Scenario
}

// repeatSteps strikes the plan's steps n times in all, each round after
// the last has healed and a lease has run out (so that a round's damage
// is not the next round's precondition), with the fault phase grown by
// what the extra rounds take.
func repeatSteps(s scenarios.Scenario, n int) scenarios.Scenario {
	c := s
	ttl := s.TTL.D()
	span := (&nemesis.Plan{Steps: s.Fault.Steps}).Span(ttl)
	gap := lastHeal(s.Fault.Steps, ttl) + ttl
	c.Fault.Steps = slices.Clone(s.Fault.Steps)
	for range n - 1 {
		round := slices.Clone(s.Fault.Steps)
		round[0].After += gap
		c.Fault.Steps = append(c.Fault.Steps, round...)
	}
	c.Time = scenarios.Duration(s.Time.D() + time.Duration(n-1)*(span+gap))
	return c
}

// lastHeal is how long the last step's fault lasts after it struck (its
// length, its lease TTLs).
func lastHeal(steps []nemesis.Step, ttl time.Duration) time.Duration {
	last := steps[len(steps)-1]
	return last.For + time.Duration(last.TTLs)*ttl
}

// largerSteps doubles every step's size (By: a link delay, a clock jump);
// false when no step has one.
func largerSteps(s scenarios.Scenario) (scenarios.Scenario, bool) {
	c := s
	c.Fault.Steps = slices.Clone(s.Fault.Steps)
	sized := false
	for i := range c.Fault.Steps {
		if c.Fault.Steps[i].By != 0 {
			c.Fault.Steps[i].By *= 2
			sized = true
		}
	}
	return c, sized
}
