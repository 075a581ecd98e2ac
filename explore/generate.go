// Package explore searches for what breaks a lock that nobody has studied:
// it generates scenarios from what the lock declares (Offer) and from the
// fault catalogue's declarations, aims most of their faults at the calls
// that decide a lease (a grant, an extend, a renewal, a release), runs and
// judges each, and shrinks what broke the lock to a small scenario file
// that breaks it on every seed tried (shrink.go). With a second lock, every
// generated scenario runs on both, and what breaks one and not the other
// is kept (compare.go).
//
// The generator reads no scenario file: it knows the lock's declaration,
// the faults', the workloads' and the topologies', and nothing of the
// findings a person wrote.
package explore

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/scenarios"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// Generated is one scenario the generator drew: a scenario file like any
// other, the seed its run takes, and what its faults aim at.
type Generated struct {
	Index    int
	Scenario scenarios.Scenario
	Seed     uint64
	Aim      Aim
}

// Aim is what a generated run aims its faults at.
type Aim struct {
	// Family is how the faults reach the call (families below).
	Family string `json:"family"`
	// Call is the lock's call the faults are aimed at: acquire (a grant),
	// release, extend, reacquire, renew (a watchdog's renewal); "" for
	// faults at random moments.
	Call string `json:"call,omitempty"`
	// Fault is the fault struck (the first, for several).
	Fault string `json:"fault"`
}

// The calls a fault can be aimed at, as Aim.Call names them.
const (
	CallAcquire   = "acquire"
	CallRelease   = "release"
	CallExtend    = locks.CallExtend
	CallReacquire = locks.CallReacquire
	CallRenew     = "renew"
)

// Generate draws run index of the exploration seeded seed for the lock o
// declares. try > 0 draws again, differently, for a scenario the lock
// refused (Explore asks Prepare).
func Generate(o Offer, seed uint64, index, try int) (Generated, error) {
	b := &build{d: newDrawer(seed, index, fmt.Sprintf("scenario %d", try)), o: o}
	b.place = b.drawPlace()
	b.ttl = pick(b.d, weighted[time.Duration]{4, time.Second}, weighted[time.Duration]{2, 2 * time.Second}, weighted[time.Duration]{1, 4 * time.Second})
	f, call := b.drawFamily()
	b.aim = Aim{Family: f.name, Call: call}
	b.s = scenarios.Scenario{
		Name:    fmt.Sprintf("explore-%d-%03d", seed, index),
		Expect:  scenarios.Unknown,
		Lock:    o.Lock,
		Cluster: b.place.Spec(),
		Nemesis: nemesis.PlanSchedule,
	}
	b.s.LockOptions.Library = maps.Clone(o.Knobs)
	b.s.TTL = scenarios.Duration(b.ttl)
	b.s.Pause = scenarios.Duration(20 * time.Millisecond)
	b.shape(call)
	if err := f.plan(b, call); err != nil {
		return Generated{}, fmt.Errorf("generating run %d (%s at %s): %w", index, f.name, call, err)
	}
	b.timing()
	b.s.Description = b.describe(seed, index)
	if o.Target {
		// Keys of the run's own: a deployment's keys of an earlier run may
		// still be held, and a run refuses keys that exist.
		renameKeys(&b.s, fmt.Sprintf("explore-%d-%03d-", seed, index))
	}
	return Generated{Index: index, Scenario: b.s, Seed: seedOf(seed, index), Aim: b.aim}, nil
}

// renameKeys puts prefix before every lock key s names: its keys, and the
// keys its steps wait for or aim at.
func renameKeys(s *scenarios.Scenario, prefix string) {
	for i, k := range s.Keys {
		s.Keys[i] = prefix + k
	}
	for i := range s.Fault.Steps {
		st := &s.Fault.Steps[i]
		if st.Key != "" {
			st.Key = prefix + st.Key
		}
		if st.WaitKey != "" {
			st.WaitKey = prefix + st.WaitKey
		}
	}
}

// build is one scenario being drawn.
type build struct {
	d     drawer
	o     Offer
	place Place
	ttl   time.Duration
	aim   Aim
	s     scenarios.Scenario
	// words say what the faults do, for the description.
	words string
}

// drawPlace draws where the lock runs: one master most often, then the
// quorum shapes and the topologies that fail over.
func (b *build) drawPlace() Place {
	var ws []weighted[Place]
	for _, p := range b.o.Places {
		w := 2
		switch {
		case p.Masters == 1:
			w = 4
		case p.Masters == 5:
			w = 1
		case p.Topology == "cluster":
			w = 1
		}
		ws = append(ws, weighted[Place]{w, p})
	}
	return pick(b.d, ws...)
}

// leaseCalls are the calls of this lock that decide a lease after its
// grant: what it offers on a held lease, its watchdog's renewals, and the
// release every lock has.
func (b *build) leaseCalls() []string {
	calls := slices.Clone(b.o.Calls)
	if b.o.Renews {
		calls = append(calls, CallRenew)
	}
	return append(calls, CallRelease)
}

// drawFamily draws how the faults reach the lock, and the call they aim at.
// Calls made on a held lease (an extend, a renewal) are drawn more often
// than a release: they are where a lock decides that a lease goes on.
func (b *build) drawFamily() (family, string) {
	var ws []weighted[family]
	for _, f := range families {
		if f.applies == nil || f.applies(b) {
			w := f.weight
			if b.o.Resends {
				w += f.resent
			}
			ws = append(ws, weighted[family]{w, f})
		}
	}
	f := pick(b.d, ws...)
	calls := f.calls(b)
	var cs []weighted[string]
	for _, c := range calls {
		w := 1
		if c != CallRelease && c != CallAcquire {
			w = 3
		}
		cs = append(cs, weighted[string]{w, c})
	}
	return f, pick(b.d, cs...)
}

// shape draws the workload, its holds, the clients and keys for the call
// aimed at: heartbeats for an extend, keepalives for a re-acquire, holds
// of several TTLs for a watchdog's renewals, and otherwise holds shorter
// than the lease or across its end.
func (b *build) shape(call string) {
	t := b.ttl
	b.s.Clients = b.d.intIn(2, 4)
	b.s.Keys = []string{"k0"}
	if b.d.chance(1.0 / 3) {
		b.s.Keys = append(b.s.Keys, "k1")
	}
	long := func(lo, hi float64) {
		b.s.HoldMin = scenarios.Duration(scaled(t, lo))
		b.s.HoldMax = scenarios.Duration(scaled(t, hi))
	}
	switch call {
	case CallExtend, CallReacquire:
		b.s.Workload = workloadMaking(call)
		long(one(b.d, 1.5, 2.0), 3)
	case CallRenew:
		b.s.Workload = one(b.d, "mutex", "counter")
		lo := one(b.d, 3.0, 5.0)
		long(lo, lo+1)
	default:
		b.s.Workload = one(b.d, "mutex", "counter")
		if b.d.chance(2.0 / 3) {
			long(0.05, 0.3)
		} else {
			long(0.5, 1.5)
		}
	}
	if b.o.Reentrant && b.d.chance(0.3) {
		b.s.Reenter = true
	}
	if b.o.Queues && call != CallExtend && call != CallReacquire && b.d.chance(0.3) {
		b.s.Queue = true
		b.s.Keys = []string{"k0"}
		b.s.Clients = b.d.intIn(4, 5)
		b.s.LockOptions.WaitMS = scaled(t, 1.5).Milliseconds()
	}
}

// workloadMaking is the registered workload whose clients make call on
// their leases (heartbeat extends, keepalive re-acquires).
func workloadMaking(call string) string {
	for _, n := range workloads.Names() {
		k, _ := workloads.Get(n)
		if slices.Equal(k.Calls, []string{call}) && k.NeedsKeys {
			return n
		}
	}
	return ""
}

// reads reports a workload that reads a resource under its lease, so a
// fault can strike between that read and the write.
func (b *build) reads() bool {
	k, err := workloads.Get(b.s.WorkloadName())
	return err == nil && k.Resource
}

// timing sets the fault phase to what the plan needs, with room for its
// moments to come late on a loaded machine, and the minimum of acquires a
// run with holds this long can make.
func (b *build) timing() {
	span := 8 * b.ttl
	if b.s.Nemesis == nemesis.PlanSchedule {
		span = (&nemesis.Plan{Steps: b.s.Fault.Steps}).Span(b.ttl) + b.waits()
	}
	b.s.Time = scenarios.Duration(max(span+2*time.Second+2*b.ttl, 4*time.Second))
	b.s.MinAcquires = 5
	if b.s.HoldMin.D() >= b.ttl {
		b.s.MinAcquires = 2
	}
}

// waits is the time the plan's steps may spend waiting on the workload,
// which Plan.Span leaves out: a step on a holder's event that comes after
// a delay waits for the next grant, up to a hold's length; a pause until
// the handoff may see the key granted within its length, held a whole
// hold, and its handoff only at the grant after that, a lease later.
// (audit's call-stalled on rueidislock: 3-4 s holds, a 7 s fault phase,
// the handoff missed on every version.)
func (b *build) waits() time.Duration {
	var w time.Duration
	for _, st := range b.s.Fault.Steps {
		if st.On != "" && st.After > 0 {
			w += b.s.HoldMax.D()
		}
		if st.Until == nemesis.UntilHandoff {
			w += b.s.HoldMax.D() + b.ttl
		}
	}
	return w
}

// describe says what the run stages, in one line.
func (b *build) describe(seed uint64, index int) string {
	call := b.aim.Call
	if call == "" {
		call = "no call in particular"
	}
	return fmt.Sprintf("drawn by deadbolt explore (seed %d, run %d) for %s on %s: %s workload, %s; aimed at %s (%s)",
		seed, index, b.o.Lock, b.place, b.s.WorkloadName(), b.words, call, b.aim.Family)
}

// faultsWhere lists the catalogue's faults whose declaration keep says yes
// to, sorted.
func faultsWhere(keep func(name string, d nemesis.FaultDecl) bool) []string {
	var out []string
	for _, n := range nemesis.Faults() {
		d, _ := nemesis.FaultOf(n)
		if keep(n, d) {
			out = append(out, n)
		}
	}
	return out
}

// targetKind is the kind of a selector: node, primary, holder, link, ...
func targetKind(sel string) string {
	kind, _, _ := strings.Cut(sel, ":")
	return kind
}

// onProcess reports a fault that strikes a client process at a moment of
// the schedule's choosing (not inside one of its requests).
func onProcess(name string, d nemesis.FaultDecl) bool {
	_, _, inside := nemesis.Inside(name)
	k := targetKind(d.Target)
	return !inside && d.Effects.OnClients && (k == "holder" || k == "client")
}

// onLinks reports a fault on one client's links to nodes.
func onLinks(_ string, d nemesis.FaultDecl) bool {
	return d.Effects.OnClients && targetKind(d.Target) == "link"
}

// holderEvent is the workload event that shows the holder holds its key:
// its read under the lease, when the workload reads, half the time.
func (b *build) holderEvent() history.F {
	if b.reads() && b.d.chance(0.5) {
		return history.Read
	}
	return history.Acquire
}

// generatorFiles are the files that draw scenarios: a test holds them to
// reading no scenario file.
var generatorFiles = []string{"draw.go", "families.go", "generate.go", "offer.go"}

// maxDraws bounds the draws of one run the lock refuses.
const maxDraws = 20

// Draw is run index of the exploration, drawn again until the lock can run
// it with o (Prepare, before anything starts), and how many draws it
// refused on the way.
func Draw(offer Offer, seed uint64, index int, o scenarios.RunOptions) (Generated, int, error) {
	return drawFrom(offer, seed, index, 0, o)
}

// drawFrom is Draw from the try from on: the draws before it were taken.
func drawFrom(offer Offer, seed uint64, index, from int, o scenarios.RunOptions) (Generated, int, error) {
	var last error
	for try := from; try < maxDraws; try++ {
		g, err := Generate(offer, seed, index, try)
		if err == nil {
			if _, err = g.Scenario.Prepare(o); err == nil {
				return g, try, nil
			}
		}
		last = err
	}
	return Generated{}, maxDraws, fmt.Errorf("run %d: %d draws, none of them runs lock %s; the last: %w", index, maxDraws, offer.Lock, last)
}
