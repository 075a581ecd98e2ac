package explore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// family is one way of reaching a lock's call with faults: which faults
// (chosen by what their declarations say they do), on what, when and for
// how long, each length drawn against the lease's TTL (before, across
// and after its end) or the lock's call timeout.
type family struct {
	name   string
	weight int
	// resent is added to weight for a lock whose client sends a timed-out
	// command again (Offer.Resends).
	resent int
	// applies says whether the family can run for this lock and place
	// (nil: always).
	applies func(b *build) bool
	// calls are the calls it can aim at.
	calls func(b *build) []string
	// plan draws the faults, and what they need of the lock's options.
	plan func(b *build, call string) error
}

// families are drawn by weight; all but random aim at a call that decides
// a lease.
var families = []family{
	{name: "stall-holder", weight: 4, calls: (*build).leaseCalls, plan: stallHolder},
	{name: "inside-call", weight: 3, calls: insideCalls, plan: insideCall},
	{name: "slow-replies", weight: 4, calls: func(b *build) []string { return append(b.leaseCalls(), CallAcquire) }, plan: slowReplies},
	{name: "cut-holder", weight: 1, calls: (*build).leaseCalls, plan: cutHolder},
	{name: "node-at-grant", weight: 2, applies: onOwnNodes, calls: func(*build) []string { return []string{CallAcquire} }, plan: nodeAtGrant},
	{name: "node-while-asking", weight: 3, resent: 6, applies: onOwnNodes, calls: func(*build) []string { return []string{CallAcquire} }, plan: nodeWhileAsking},
	{name: "stop-at-point", weight: 2, applies: func(b *build) bool { return len(b.o.Points) > 0 },
		calls: func(b *build) []string { return []string{CallAcquire, CallRelease} }, plan: stopAtPoint},
	{name: "random", weight: 1, applies: func(b *build) bool { return onOwnNodes(b) && b.lockNodes() >= 3 },
		calls: func(*build) []string { return []string{""} }, plan: randomFaults},
}

// onOwnNodes: the runs strike nodes deadbolt started, not a deployment of
// the user's (--target), which takes faults on clients and links alone.
func onOwnNodes(b *build) bool { return !b.o.Target }

// lockNodes is how many lock-service Redis nodes the place has.
func (b *build) lockNodes() int {
	switch b.place.Topology {
	case cluster.Independent:
		return b.place.Masters
	case cluster.RedisCluster:
		return 6
	}
	return 3 // a master and two replicas
}

// length draws how long a fault lasts against the lease: shorter than the
// TTL, across its end, or well past it.
func (b *build) length() time.Duration {
	return scaled(b.ttl, one(b.d, 0.5, 1.0, 1.5, 2.0, 3.0))
}

// timeout is the lock's call timeout: the one the scenario gives one of
// deadbolt's own locks, else what the lock declares its client waits for
// a reply (a library's, as its users run it); 0 when it waits for ever.
func (b *build) timeout() time.Duration {
	if b.s.LockOptions.TimeoutMS > 0 && !b.o.TakesKnobs {
		return time.Duration(b.s.LockOptions.TimeoutMS) * time.Millisecond
	}
	if b.o.CallTimeout > 0 || b.o.TakesKnobs {
		return b.o.CallTimeout
	}
	return 500 * time.Millisecond // deadbolt's own locks' default, when undeclared
}

// timeoutWords says the call timeout in a description.
func (b *build) timeoutWords() string {
	if t := b.timeout(); t > 0 {
		return t.String()
	}
	return "none"
}

// stallHolder stops (or kills) the holder of k0 the moment it holds it, or
// has read under it, so that the lease runs out while it sleeps and its
// next call (the extend, the renewal, the release) comes late; half the
// time the pause ends only once another client was granted the key.
func stallHolder(b *build, call string) error {
	fs := faultsWhere(onProcess)
	if len(fs) == 0 {
		return fmt.Errorf("the catalogue has no fault on a client process")
	}
	// A stop is drawn more often than a kill: a stopped holder wakes into
	// its next call, which is what is aimed at.
	var ws []weighted[string]
	for _, f := range fs {
		d, _ := nemesis.FaultOf(f)
		ws = append(ws, weighted[string]{map[bool]int{true: 1, false: 3}[d.Effects.Kills], f})
	}
	f := pick(b.d, ws...)
	s := nemesis.Step{Fault: f, Target: "holder", Key: "k0", On: b.holderEvent(),
		After: scaled(b.ttl, one(b.d, 0.0, 0.5, 1.0)), For: b.length()}
	if b.s.HoldMin.D() >= b.ttl {
		// Holds of several TTLs: the first holder, caught at once, or the
		// next grant may come after the fault phase.
		s.After = 0
	}
	if d, _ := nemesis.FaultOf(f); b.d.chance(1.0/3) && b.s.Clients > 1 && !d.Effects.Instant {
		// The pause ends at the next grant of k0: every client asks for
		// k0 alone, so that one does.
		s.Until = nemesis.UntilHandoff
		b.s.Keys = []string{"k0"}
	}
	b.s.Fault.Steps = []nemesis.Step{s}
	b.aim.Fault = f
	b.words = fmt.Sprintf("%s on the holder of k0 at its %s for %s%s", f, s.On, s.For, map[bool]string{true: " until the next grant", false: ""}[s.Until == nemesis.UntilHandoff])
	return nil
}

// insideCalls are the calls a fault inside a request can strike: what
// the catalogue's faults strike inside (acquire, release, renew), with an
// extend or re-acquire where the lock offers one.
func insideCalls(b *build) []string {
	calls := []string{CallAcquire, CallRelease}
	for _, c := range b.o.Calls {
		if len(insideFaults(c)) > 0 {
			calls = append(calls, c)
		}
	}
	return calls
}

// insideFaults are the faults that strike inside a request for call.
func insideFaults(call string) []string {
	if call == CallRenew {
		return nil // a watchdog's renewal is no request the harness sends
	}
	op := history.F(call)
	if call == CallExtend || call == CallReacquire {
		op = history.Renew
	}
	return faultsWhere(func(n string, _ nemesis.FaultDecl) bool {
		got, _, ok := nemesis.Inside(n)
		return ok && got == op
	})
}

// insideCall stops or kills a client a seeded delay after the harness sent
// it the call, several requests in a row, so that one lands between the
// lock's round trips: the lease runs out in the middle of the call.
func insideCall(b *build, call string) error {
	fs := insideFaults(call)
	if len(fs) == 0 {
		return fmt.Errorf("no fault of the catalogue strikes inside a %s (a watchdog's renewal is the lock's own, no request the harness sends)", call)
	}
	f := one(b.d, fs...)
	s := nemesis.Step{Fault: f, Target: "holder", Key: "k0", Strikes: one(b.d, 3, 5, 8)}
	if _, kills, _ := nemesis.Inside(f); !kills {
		s.For = scaled(b.ttl, one(b.d, 1.0, 2.0))
	}
	if call == CallAcquire && b.d.chance(1.0/3) {
		s.Target = "client:0" // only slot 0 asks while it is aimed at: a free key
	}
	b.s.Fault.Steps = []nemesis.Step{s}
	b.aim.Fault = f
	b.words = fmt.Sprintf("%s on %s's requests for k0, %d strikes", f, s.Target, s.Strikes)
	return nil
}

// linkNodes is a link target's far end on this place: the one master, a
// share of the masters, or the master of a group.
func (b *build) linkNodes() string {
	switch {
	case b.place.Topology != cluster.Independent:
		return "primary"
	case b.place.Masters == 1:
		return "primary"
	}
	return one(b.d, "majority", "minority")
}

// slowReplies holds back every reply to client 0 once it holds k0 (or
// before its grant, aimed at the grant), by a delay drawn against the
// lease: a small one that each renewal loses again, one across the
// lease's end, one past it; the lock's call timeout is raised above the
// delay two times in three, so that a late yes gets through.
func slowReplies(b *build, call string) error {
	fs := faultsWhere(func(n string, d nemesis.FaultDecl) bool { return onLinks(n, d) && d.Size != nil })
	if len(fs) == 0 {
		return fmt.Errorf("the catalogue has no fault that slows a link")
	}
	f := one(b.d, fs...)
	// A call on a held lease is made again and again: a small delay is
	// lost again at each one, so small delays are drawn as often as those
	// across the lease's end and past it.
	by := scaled(b.ttl, one(b.d, 0.1, 0.15, 0.25, 0.5, 0.75, 1.0, 1.5))
	length := b.length()
	if call != CallAcquire && call != CallRelease {
		by = scaled(b.ttl, pick(b.d, weighted[float64]{2, 0.1}, weighted[float64]{2, 0.15}, weighted[float64]{2, 0.25},
			weighted[float64]{1, 0.5}, weighted[float64]{1, 0.75}, weighted[float64]{1, 1.0}, weighted[float64]{1, 1.5}))
		length = scaled(b.ttl, one(b.d, 3.0, 5.0))
	}
	s := nemesis.Step{Fault: f, Target: "link:0:" + b.linkNodes(), WaitKey: "k0", WaitSlot: 0, By: by, For: length}
	if b.d.chance(2.0/3) && !b.o.TakesKnobs {
		// One of deadbolt's own locks: its timeout is the scenario's to
		// set. A library runs with its own, as its users run it.
		b.s.LockOptions.TimeoutMS = max(2*by, by+b.ttl/2).Milliseconds()
	}
	if call == CallAcquire {
		// A grant under the fault can come only when the call may wait
		// out the delay; otherwise the acquire is aimed at in any outcome.
		s.Aim = nemesis.AimAsked
		if t := b.timeout(); (t == 0 || t > by) && b.d.chance(0.5) {
			s.Aim = nemesis.AimGrant
		}
	}
	b.s.Fault.Steps = []nemesis.Step{s}
	b.aim.Fault = f
	b.words = fmt.Sprintf("%s of %s on client 0's links for %s once it holds k0, call timeout %s", f, by, length, b.timeoutWords())
	if s.Aim != nemesis.AimNone {
		b.words = fmt.Sprintf("%s of %s on client 0's links for %s, then its acquire of k0 under it, call timeout %s", f, by, length, b.timeoutWords())
	}
	return nil
}

// cutHolder cuts client 0 off from its nodes once it holds k0, for a
// length drawn against the lease.
func cutHolder(b *build, call string) error {
	fs := faultsWhere(func(n string, d nemesis.FaultDecl) bool { return onLinks(n, d) && d.Size == nil })
	if len(fs) == 0 {
		return fmt.Errorf("the catalogue has no fault that cuts a link")
	}
	f := one(b.d, fs...)
	s := nemesis.Step{Fault: f, Target: "link:0:" + b.linkNodes(), WaitKey: "k0", WaitSlot: 0, For: b.length()}
	b.s.Fault.Steps = []nemesis.Step{s}
	b.aim.Fault = f
	b.words = fmt.Sprintf("%s on client 0's links for %s once it holds k0", f, s.For)
	return nil
}

// nodeFaults are the catalogue's faults on nodes that this place can
// feel: not those between nodes where the masters have no peers, nor
// those that need another topology.
func (b *build) nodeFaults() []string {
	return faultsWhere(func(n string, d nemesis.FaultDecl) bool {
		if d.Effects.OnClients {
			return false
		}
		if _, _, inside := nemesis.Inside(n); inside {
			return false
		}
		if d.Effects.BetweenNodes && b.place.Topology == cluster.Independent {
			return false
		}
		if !d.Needs.Allows(b.place.Topology) {
			return false
		}
		return b.nodeTargets(d) != nil
	})
}

// nodeTargets are the shapes of target a node fault can take here: one of
// several masters, a minority, a majority, the primary, a replica, a
// Sentinel; a fault whose declared target is a role keeps that role.
func (b *build) nodeTargets(d nemesis.FaultDecl) []string {
	def := targetKind(d.Target)
	switch b.place.Topology {
	case cluster.Independent:
		if def == "replica" || def == "sentinel" {
			return nil
		}
		if b.place.Masters == 1 {
			return []string{"node:redis-1"}
		}
		return []string{"node:redis-1", "minority", "majority"}
	case cluster.Sentinel:
		switch def {
		case "sentinel", "replica":
			return []string{def}
		}
		return []string{"primary", "replica"}
	case cluster.RedisCluster:
		switch def {
		case "sentinel":
			return nil
		case "replica":
			return []string{def}
		}
		return []string{"primary", "replica"}
	}
	return nil
}

// nodeStep is fault f on a node target drawn for this place, with its
// size as the fault declares it drawn (a clock jump's), and held until a
// failover where silencing the primary makes one.
func (b *build) nodeStep(f string) nemesis.Step {
	d, _ := nemesis.FaultOf(f)
	s := nemesis.Step{Fault: f, Target: one(b.d, b.nodeTargets(d)...), For: b.length()}
	if d.Size != nil {
		rng := rand.New(rand.NewPCG(uint64(b.d.intIn(0, 1<<30)), uint64(b.d.intIn(0, 1<<30))))
		s.By = d.Size(rng, b.ttl)
	}
	if d.Effects.Silences && s.Target == "primary" && b.d.chance(0.5) {
		s.Until = nemesis.UntilFailover
	}
	if d.Effects.Instant {
		s.For = 0
	}
	return s
}

// nodeAtGrant strikes nodes right after client 0's grant of k0 (or first,
// aimed at the grant made under the fault), so that the grant's lease
// meets what the fault does to its key: lost with the node, expired early
// by a clock, kept by a master that is then replaced.
func nodeAtGrant(b *build, _ string) error {
	fs := b.nodeFaults()
	if len(fs) == 0 {
		return fmt.Errorf("no node fault fits %s", b.place)
	}
	f := one(b.d, fs...)
	s := b.nodeStep(f)
	s.WaitKey, s.WaitSlot = "k0", 0
	d, _ := nemesis.FaultOf(f)
	if b.d.chance(1.0/3) && s.Until != nemesis.UntilFailover && !d.Effects.Instant {
		// The acquire made under the fault, in any outcome: a node that
		// stops or is killed grants nothing, and a lock that must refuse
		// is tested by its refusal.
		s.Aim = nemesis.AimAsked
	}
	if s.Until != nemesis.UntilFailover && !d.Effects.Instant && b.d.chance(0.25) {
		s.For, s.TTLs = 0, 1 // held past every lease the nodes granted
	}
	b.s.Fault.Steps = []nemesis.Step{s}
	b.aim.Fault = f
	when := "once client 0 holds k0"
	if s.Aim != nemesis.AimNone {
		when = "then client 0's acquire of k0 under it"
	}
	b.words = fmt.Sprintf("%s on %s for %s %s", f, s.Target, stepLength(s, b.ttl), when)
	return nil
}

// nodeWhileAsking strikes nodes while clients ask for keys, up to three
// times, each for a length drawn against the lock's call timeout (calls
// that time out and are retried) or the lease.
func nodeWhileAsking(b *build, _ string) error {
	fs := b.nodeFaults()
	if len(fs) == 0 {
		return fmt.Errorf("no node fault fits %s", b.place)
	}
	// A node that stalls and keeps its keys makes calls time out, and a
	// call retried after its timeout may find its own first try's work:
	// stalls are drawn three times as often as the others, eight times
	// for a lock whose client resends a timed-out call: its first try,
	// run when the node wakes, and the retry both reach the key.
	stall := 3
	if b.o.Resends {
		stall = 8
	}
	var ws []weighted[string]
	for _, f := range fs {
		d, _ := nemesis.FaultOf(f)
		ws = append(ws, weighted[string]{map[bool]int{true: stall, false: 1}[d.Effects.KeepsKeys && !d.Effects.Instant], f})
	}
	f := pick(b.d, ws...)
	n := one(b.d, 1, 2, 3)
	tau := b.timeout()
	if tau == 0 {
		// A client that waits for ever: the stall is drawn against the
		// lease alone.
		tau = b.ttl
	}
	var steps []nemesis.Step
	for i := range n {
		s := b.nodeStep(f)
		switch {
		case s.For > 0 && b.o.Resends:
			// Past the timeout and short of the retries' end: the
			// retry is sent while the first try waits in the node.
			s.For = pick(b.d, weighted[time.Duration]{2, scaled(tau, 1.5)}, weighted[time.Duration]{2, scaled(tau, 2.5)},
				weighted[time.Duration]{1, b.ttl}, weighted[time.Duration]{1, 2 * b.ttl})
		case s.For > 0:
			s.For = one(b.d, scaled(tau, 1.5), scaled(tau, 2.5), b.ttl, 2*b.ttl)
		}
		s.After = scaled(b.ttl, one(b.d, 0.5, 1.0))
		if i > 0 {
			s.After += steps[i-1].For + b.ttl
		}
		steps = append(steps, s)
	}
	b.s.Fault.Steps = steps
	b.aim.Fault = f
	b.words = fmt.Sprintf("%s on %s for %s, %d time(s), while clients ask (call timeout %s)", f, steps[0].Target, steps[0].For, n, b.timeoutWords())
	return nil
}

// stopAtPoint stops (or kills) client 0 at a point the lock declares
// inside its acquire or release, with k0 kept for it until it got there.
func stopAtPoint(b *build, call string) error {
	fs := faultsWhere(onProcess)
	if len(fs) == 0 {
		return fmt.Errorf("the catalogue has no fault on a client process")
	}
	f := one(b.d, fs...)
	p := one(b.d, b.o.Points...)
	s := nemesis.Step{Fault: f, Target: "client:0", Key: "k0", Point: p, For: scaled(b.ttl, one(b.d, 1.0, 2.0))}
	b.s.Fault.Steps = []nemesis.Step{s}
	b.aim.Fault = f
	b.aim.Call = "point " + p
	b.words = fmt.Sprintf("%s on client 0 stopped at the lock's point %s", f, p)
	return nil
}

// randomFaults strikes two or three faults the place can take, one at a
// time at seeded moments: what the matrix's random soak does, and the
// control for the aimed families.
func randomFaults(b *build, _ string) error {
	var fs []string
	for _, f := range nemesis.Faults() {
		d, _ := nemesis.FaultOf(f)
		if !d.Needs.Allows(b.place.Topology) || (d.Effects.BetweenNodes && b.place.Topology == cluster.Independent) {
			continue
		}
		if k := targetKind(d.Target); k == "sentinel" || k == "replica" || k == "primary" {
			if b.place.Topology == cluster.Independent {
				continue
			}
		}
		fs = append(fs, f)
	}
	n := min(len(fs), one(b.d, 2, 3))
	var chosen []string
	for len(chosen) < n {
		f := one(b.d, fs...)
		if !slices.Contains(chosen, f) {
			chosen = append(chosen, f)
		}
	}
	slices.Sort(chosen)
	b.s.Nemesis = "random"
	b.s.Fault.Faults = chosen
	b.s.Fault.After = b.ttl
	b.aim.Fault = chosen[0]
	b.words = fmt.Sprintf("random faults from %v", chosen)
	return nil
}

// stepLength says how long a step's fault lasts.
func stepLength(s nemesis.Step, ttl time.Duration) string {
	d := s.For + time.Duration(s.TTLs)*ttl
	if s.Until == nemesis.UntilFailover {
		return fmt.Sprintf("%s and until a failover", d)
	}
	return d.String()
}
