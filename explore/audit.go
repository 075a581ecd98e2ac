package explore

import (
	"fmt"
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// The audit's call columns: the matrix's failures run acquire, hold and
// release, so a library's extend, re-acquire or watchdog renewal is never
// made under a fault there. Each column here is one of the generator's
// families aimed at the call on a held lease that the row's lock offers
// (its extend, else its re-acquire, else its own renewals), drawn with the
// choices that decide it made sure: the lease surely runs out while the
// holder sleeps, a reply surely comes after the lease's end, and so on.
// A lock that offers no such call has no cell, and says so.

// callColumn is one call column.
type callColumn struct {
	name, what string
	family     string
	// sure fixes the generated step where a draw could miss the moment.
	sure func(b *build, s *nemesis.Step)
	// strikes is how many times the step strikes, a TTL apart (0: once).
	strikes int
	// ttl is the cell's lease time (0: a second).
	ttl time.Duration
}

// ownTimeout gives one of deadbolt's own locks the call timeout d; a
// library keeps its own, as its users run it (a late reply it gives up on
// is a cell the run shows not applicable, from its evidence).
func (b *build) ownTimeout(d time.Duration) {
	if !b.o.TakesKnobs {
		b.s.LockOptions.TimeoutMS = d.Milliseconds()
	}
}

var callColumns = []callColumn{
	{name: "call-stalled", family: "stall-holder",
		what: "the holder of a key stops between its read and its call on the lease (extend, re-acquire, or its watchdog's renewal) until another client is granted the key, then makes it",
		sure: func(b *build, s *nemesis.Step) {
			s.For, s.TTLs, s.Until, s.After = 0, 2, nemesis.UntilHandoff, time.Second
			if b.reads() {
				s.On = history.Read
			}
		}},
	{name: "call-late-reply", family: "slow-replies",
		what: "every reply to the holder comes a TTL late while it calls on its lease, with a call timeout that lets the late reply through",
		sure: func(b *build, s *nemesis.Step) {
			s.By, s.For = b.ttl, 4*b.ttl
			b.ownTimeout(3 * b.ttl)
		}},
	{name: "call-drifting-replies", family: "slow-replies",
		what: "every reply to the holder comes a seventh of a TTL late, for many calls on its lease in a row",
		sure: func(b *build, s *nemesis.Step) {
			s.By, s.For = b.ttl/7, 6*b.ttl
			b.ownTimeout(3 * b.ttl)
		}},
	{name: "call-interrupted", family: "inside-call",
		what: "a client stops inside its call on the lease (between the request and its reply) for two TTLs, several requests in a row",
		sure: func(b *build, s *nemesis.Step) {
			s.Target, s.Strikes, s.For, s.TTLs = "holder", 8, 0, 2
		}},
	// A lease of three seconds: the kill is aimed at a lease held through
	// the strike, and a kill took 1.4 s to complete on a loaded machine
	// (docs/results/2026-11-28-ci-steadiness.md), longer than a 1 s lease.
	{name: "call-master-lost", family: "node-at-grant", ttl: 3 * time.Second,
		what: "one of the masters is killed and restarted empty once a client holds a key it keeps calling on",
		sure: func(b *build, s *nemesis.Step) {
			s.Fault, s.Aim, s.Until, s.For, s.TTLs, s.By = "kill", nemesis.AimNone, nemesis.UntilLength, time.Second, 0, 0
			s.Target = "node:redis-1"
			if b.place.Topology != cluster.Independent {
				s.Target, s.Until, s.For = "primary", nemesis.UntilFailover, 2*b.ttl
			}
		}},
	{name: "call-connections-closed", family: "node-at-grant", strikes: 3,
		what: "every client connection of the master is closed once a client holds a key it keeps calling on, three times",
		sure: func(b *build, s *nemesis.Step) {
			s.Fault, s.Aim, s.Until, s.For, s.TTLs, s.By = "kill-connections", nemesis.AimNone, nemesis.UntilLength, 0, 0, 0
			s.Target = "node:redis-1"
			if b.place.Topology != cluster.Independent {
				s.Target = "primary"
			}
		}},
}

// CallFailures are the audit's call columns, each drawing its cell's
// scenario for a lock from what the lock declares (o's catalogue).
func CallFailures() []scenarios.Failure {
	var out []scenarios.Failure
	for _, c := range callColumns {
		c := c
		out = append(out, scenarios.Failure{Name: c.name, What: c.what, Draw: func(lock string, o scenarios.RunOptions) (scenarios.Scenario, error) {
			return c.draw(lock, o)
		}})
	}
	return out
}

// draw is the column's scenario for lock: the family aimed at the lock's
// call on a held lease, on a single master (or the lock's one place),
// seeded by the column's name so that every version of a library gets the
// same scenario.
func (c callColumn) draw(lock string, o scenarios.RunOptions) (scenarios.Scenario, error) {
	probe := scenarios.Scenario{Lock: lock}
	cat, err := probe.Catalogue(o)
	if err != nil {
		return scenarios.Scenario{}, err
	}
	offer, err := OfferOf(cat, lock)
	if err != nil {
		return scenarios.Scenario{}, err
	}
	call := leaseCall(offer)
	if call == "" {
		return scenarios.Scenario{}, fmt.Errorf("lock %s makes no call on a held lease: it offers no extend or re-acquire and does not renew its leases itself", lock)
	}
	var f family
	for _, fam := range families {
		if fam.name == c.family {
			f = fam
		}
	}
	ttl := c.ttl
	if ttl == 0 {
		ttl = time.Second
	}
	b := &build{d: newDrawer(0, 0, c.name), o: offer, place: offer.Places[0], ttl: ttl}
	b.aim = Aim{Family: f.name, Call: call}
	b.s = scenarios.Scenario{Name: c.name + "@" + lock, Expect: scenarios.Unknown, Lock: lock, Cluster: b.place.Spec(), Nemesis: nemesis.PlanSchedule}
	b.s.TTL, b.s.Pause = scenarios.Duration(b.ttl), scenarios.Duration(20*time.Millisecond)
	b.shape(call)
	b.s.Clients, b.s.Keys, b.s.Reenter, b.s.Queue = 3, []string{"k0"}, false, false
	b.s.LockOptions.WaitMS = 0
	if err := f.plan(b, call); err != nil {
		return scenarios.Scenario{}, err
	}
	if len(b.s.Fault.Steps) != 1 {
		return scenarios.Scenario{}, fmt.Errorf("column %s drew %d steps", c.name, len(b.s.Fault.Steps))
	}
	st := &b.s.Fault.Steps[0]
	c.sure(b, st)
	for range c.strikes - 1 {
		// Again a TTL later, while the holder calls on.
		b.s.Fault.Steps = append(b.s.Fault.Steps, nemesis.Step{Fault: st.Fault, Target: st.Target, After: b.ttl})
	}
	b.timing()
	b.s.Description = fmt.Sprintf("%s: %s; drawn by deadbolt explore for %s's %s (%s workload)", c.name, c.what, lock, call, b.s.WorkloadName())
	return b.s, nil
}

// leaseCall is the call on a held lease a lock makes most plainly: its
// extend, else its re-acquire, else its own renewals; "" for none.
func leaseCall(o Offer) string {
	switch {
	case o.Offers(CallExtend):
		return CallExtend
	case o.Offers(CallReacquire):
		return CallReacquire
	case o.Renews:
		return CallRenew
	}
	return ""
}
