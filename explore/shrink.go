package explore

import (
	"fmt"
	"slices"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/scenarios"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// Shrinking a scenario that broke a lock. Each candidate is a simpler
// scenario file: a step fewer, fewer clients or keys, a simpler workload,
// the lock's own options, a narrower target, a shorter fault phase,
// shorter faults, smaller sizes, fewer strikes, shorter holds. gopter's
// shrink streams make the candidates (its integer shrinker halves a
// length, then takes a quarter off, and so on); the search that runs them
// is ours, because each candidate is a container run on several seeds and
// the budget is a number of runs, where gopter's own loop would run a
// property thousands of times. The first candidate that still breaks the
// lock is kept, and the search starts again from it, until no candidate
// does or the budget is spent.

// Candidates are the scenarios one step simpler than s, the biggest
// simplifications first. Each is a scenario file; Prepare is the caller's
// to ask.
func Candidates(s scenarios.Scenario) gopter.Shrink {
	return gopter.ConcatShrinks(
		fewerSteps(s),
		fewerClients(s),
		fewerKeys(s),
		simplerWorkload(s),
		ownOptions(s),
		narrowerTargets(s),
		shorterPhase(s),
		stepShrinks(s),
		shorterHolds(s),
	)
}

// each is a stream of the given candidates.
func each(cs ...scenarios.Scenario) gopter.Shrink {
	i := 0
	return func() (any, bool) {
		if i >= len(cs) {
			return nil, false
		}
		i++
		return cs[i-1], true
	}
}

// halving is at most n of gopter's shrinks of a length (half of it first,
// then three quarters, ...), kept at least least, each as a candidate made
// by set. When half is below least, least itself comes first: gopter's
// steps toward d would shave ever less off it (9s, 8.44s, 8.17s, ... for
// a least of 8s), each a trial of several runs. A cut of less than a
// twentieth is not worth a trial.
func halving(d, least time.Duration, n int, set func(time.Duration) scenarios.Scenario) gopter.Shrink {
	taken := 0
	floor := gopter.NoShrink
	if least > 0 && least < d && d/2 < least && d-least >= d/20 {
		floor = each(set(least.Round(time.Millisecond)))
		taken++
	}
	return gopter.ConcatShrinks(floor, gen.Int64Shrinker(int64(d)).
		Filter(func(v any) bool {
			x := time.Duration(v.(int64))
			if x < least || x >= d || d-x < d/20 || taken >= n {
				return false
			}
			taken++
			return true
		}).
		Map(func(v int64) scenarios.Scenario { return set(time.Duration(v).Round(time.Millisecond)) }))
}

// fewerSteps drops a step of a plan, the last first (later faults tend to
// follow the damage); the next step strikes when the dropped one would
// have, plus its own wait.
func fewerSteps(s scenarios.Scenario) gopter.Shrink {
	if s.Nemesis != nemesis.PlanSchedule || len(s.Fault.Steps) < 2 {
		return gopter.NoShrink
	}
	var cs []scenarios.Scenario
	for i := len(s.Fault.Steps) - 1; i >= 0; i-- {
		c := s
		c.Fault.Steps = withoutStep(s.Fault.Steps, i)
		cs = append(cs, c)
	}
	return each(cs...)
}

// withoutStep is steps less step i.
func withoutStep(steps []nemesis.Step, i int) []nemesis.Step {
	out := slices.Clone(steps[:i])
	if i+1 < len(steps) {
		next := steps[i+1]
		next.After += steps[i].After
		out = append(out, next)
		out = append(out, steps[i+2:]...)
	}
	return out
}

// fewerClients halves the clients, down to the fewest the steps name (and
// two, so that another client can take a key).
func fewerClients(s scenarios.Scenario) gopter.Shrink {
	least := max(2, slotsNamed(s.Fault.Steps))
	var cs []scenarios.Scenario
	for _, n := range []int{least, s.Clients / 2} {
		if n >= least && n < s.Clients && !slices.ContainsFunc(cs, func(c scenarios.Scenario) bool { return c.Clients == n }) {
			c := s
			c.Clients = n
			cs = append(cs, c)
		}
	}
	return each(cs...)
}

// slotsNamed is one more than the highest client slot the steps name.
func slotsNamed(steps []nemesis.Step) int {
	n := 0
	for _, st := range steps {
		if st.WaitKey != "" && st.WaitSlot >= 0 {
			n = max(n, st.WaitSlot+1)
		}
		var slot int
		for _, f := range []string{"client:%d", "holder:%d", "link:%d:"} {
			if k, _ := fmt.Sscanf(st.Target, f, &slot); k == 1 {
				n = max(n, slot+1)
			}
		}
	}
	return n
}

// fewerKeys keeps only the keys the steps name (the first when none does).
func fewerKeys(s scenarios.Scenario) gopter.Shrink {
	var keep []string
	for _, st := range s.Fault.Steps {
		for _, k := range []string{st.Key, st.WaitKey} {
			if k != "" && !slices.Contains(keep, k) {
				keep = append(keep, k)
			}
		}
	}
	if len(keep) == 0 && len(s.Keys) > 0 {
		keep = s.Keys[:1]
	}
	if len(keep) >= len(s.Keys) {
		return gopter.NoShrink
	}
	c := s
	c.Keys = keep
	return each(c)
}

// simplerWorkload drops re-entry and queues, then runs a workload with
// less to it: one that makes no call on a held lease, one without a
// resource (when no step waits for a read of it).
func simplerWorkload(s scenarios.Scenario) gopter.Shrink {
	var cs []scenarios.Scenario
	if s.Reenter {
		c := s
		c.Reenter = false
		cs = append(cs, c)
	}
	if s.Queue {
		c := s
		c.Queue = false
		cs = append(cs, c)
	}
	kind, err := workloads.Get(s.WorkloadName())
	if err != nil {
		return each(cs...)
	}
	readsResource := slices.ContainsFunc(s.Fault.Steps, func(st nemesis.Step) bool { return st.On == history.Read }) || s.Fault.On == history.Read
	for _, name := range []string{"mutex", "counter"} {
		if name == kind.Name {
			break
		}
		k, _ := workloads.Get(name)
		if readsResource && !k.Resource {
			continue
		}
		c := s
		c.Workload = name
		cs = append(cs, c)
	}
	return each(cs...)
}

// ownOptions gives the lock its own options back, one at a time.
func ownOptions(s scenarios.Scenario) gopter.Shrink {
	var cs []scenarios.Scenario
	o := s.LockOptions
	if o.TimeoutMS != 0 {
		c := s
		c.LockOptions.TimeoutMS = 0
		cs = append(cs, c)
	}
	if o.WaitMS != 0 && !s.Queue {
		c := s
		c.LockOptions.WaitMS = 0
		cs = append(cs, c)
	}
	if o.Retries != 0 || o.RetryDelayMS != 0 {
		c := s
		c.LockOptions.Retries, c.LockOptions.RetryDelayMS = 0, 0
		cs = append(cs, c)
	}
	return each(cs...)
}

// narrowerTargets aims each step at less: a minority rather than a
// majority, one named node rather than a minority, a holder's pause that
// ends on its length rather than at a handoff, a fault struck at a grant
// rather than aimed under it.
func narrowerTargets(s scenarios.Scenario) gopter.Shrink {
	var cs []scenarios.Scenario
	for i, st := range s.Fault.Steps {
		for _, to := range narrower(st.Target, s.Cluster) {
			c := withStep(s, i, func(st *nemesis.Step) { st.Target = to })
			cs = append(cs, c)
		}
		if st.Until == nemesis.UntilHandoff {
			cs = append(cs, withStep(s, i, func(st *nemesis.Step) { st.Until = nemesis.UntilLength }))
		}
	}
	return each(cs...)
}

// narrower are the targets narrower than sel on the cluster c.
func narrower(sel string, c cluster.Spec) []string {
	switch sel {
	case "majority":
		if c.Topology == cluster.Independent && c.Defaults().Masters >= 3 {
			return []string{"minority", "node:redis-1"}
		}
	case "minority":
		return []string{"node:redis-1"}
	}
	var slot int
	var nodes string
	if n, _ := fmt.Sscanf(sel, "link:%d:%s", &slot, &nodes); n == 2 {
		switch nodes {
		case "majority":
			return []string{fmt.Sprintf("link:%d:minority", slot), fmt.Sprintf("link:%d:redis-1", slot)}
		case "minority":
			return []string{fmt.Sprintf("link:%d:redis-1", slot)}
		}
	}
	return nil
}

// withStep is s with step i changed by set.
func withStep(s scenarios.Scenario, i int, set func(*nemesis.Step)) scenarios.Scenario {
	c := s
	c.Fault.Steps = slices.Clone(s.Fault.Steps)
	set(&c.Fault.Steps[i])
	return c
}

// shorterPhase cuts the fault phase toward what the plan needs, and the
// settle toward its default.
func shorterPhase(s scenarios.Scenario) gopter.Shrink {
	need := time.Second
	if s.Nemesis == nemesis.PlanSchedule {
		need = (&nemesis.Plan{Steps: s.Fault.Steps}).Span(s.TTL.D()) + 2*time.Second + s.TTL.D()
	}
	return halving(s.Time.D(), need, 2, func(d time.Duration) scenarios.Scenario {
		c := s
		c.Time = scenarios.Duration(d)
		return c
	})
}

// stepShrinks shortens each step's fault (its for, its TTLs), its wait
// (after), its size (by, toward zero with its sign) and its strikes.
func stepShrinks(s scenarios.Scenario) gopter.Shrink {
	var all []gopter.Shrink
	ttl := s.TTL.D()
	for i, st := range s.Fault.Steps {
		if st.TTLs > 0 {
			all = append(all, each(withStep(s, i, func(st *nemesis.Step) { st.TTLs--; st.For = max(st.For, ttl/2) })))
		}
		if st.For > 0 {
			all = append(all, halving(st.For, 100*time.Millisecond, 2, func(d time.Duration) scenarios.Scenario {
				return withStep(s, i, func(st *nemesis.Step) { st.For = d })
			}))
		}
		if st.After > 0 {
			all = append(all, halving(st.After, 0, 1, func(d time.Duration) scenarios.Scenario {
				return withStep(s, i, func(st *nemesis.Step) { st.After = d })
			}))
		}
		if st.By != 0 {
			sign := time.Duration(1)
			if st.By < 0 {
				sign = -1
			}
			all = append(all, halving(sign*st.By, time.Millisecond, 2, func(d time.Duration) scenarios.Scenario {
				return withStep(s, i, func(st *nemesis.Step) { st.By = sign * d })
			}))
		}
		if st.Strikes > 1 {
			all = append(all, each(withStep(s, i, func(st *nemesis.Step) { st.Strikes = max(1, st.Strikes/2) })))
		}
	}
	return gopter.ConcatShrinks(all...)
}

// shorterHolds halves the longest hold, keeping the shortest at most it.
func shorterHolds(s scenarios.Scenario) gopter.Shrink {
	return halving(s.HoldMax.D(), max(s.HoldMin.D(), 10*time.Millisecond), 1, func(d time.Duration) scenarios.Scenario {
		c := s
		c.HoldMax = scenarios.Duration(d)
		return c
	})
}
