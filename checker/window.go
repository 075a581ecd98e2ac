package checker

import (
	"math"
	"slices"
	"sync/atomic"

	"github.com/deadbolt-lab/deadbolt/history"
)

// Checking one key a window at a time, so that what a key holds is its
// open window, not its share of the history. The key's operations are cut
// where it is quiescent: no operation open (the spill marks each such
// place, cutFlag) and every lease that could hold the key run out by the
// latest time in the window, by the holding windows' own semantics
// (holdReplay.runOutBy). Every later event then comes after every event
// of the window, so:
//
//   - holds replay on, the leases left open (run out, not released) carried
//     over, their segments emitted at the cut as they would be later;
//   - no hold of the window overlaps a later one: the double-hold sweep and
//     the releases check need only the window;
//   - the lease-lock search chains on (pieceChain), and only a key it
//     cannot prove legal is searched whole;
//   - liveness's sweep carries on (liveWindows), and fairness's pairs never
//     span a cut.
//
// A cut is taken only once the operations after it confirm it (all come
// later in time: a client-stamped renewal may be recorded after later
// operations). What could still make the windows disagree with the whole
// key sends the key to be checked whole, read again from the spill (redo):
// an operation of a window that is not later than the windows before it,
// an operation naming a lease of an earlier window that is not open
// (a release or renewal before its lease's acquire, a second release, an
// unknown acquire's lease used later), a key the chained search cannot
// prove legal, or a liveness threshold that changed after refusals were
// counted with it.

// minWindowOps is the fewest operations a window is cut at: cuts are
// cheap, but each window's checks have a fixed cost. confirmOps is how
// many operations after a cut must come later in time before the cut is
// taken. Variables for the tests, which cut at every chance.
var minWindowOps, confirmOps = 1024, 64

// verifyBlocks makes each window lastGrant says cannot be cut be replayed
// too, to prove it (the tests set it).
var verifyBlocks = false

// windowCounts count the windows cut and the keys checked whole after
// all, for the tests (and `deadbolt check -v`-style diagnostics).
var windowCounts struct{ cuts, redone atomic.Int64 }

// windowRun is what every key of one check shares.
type windowRun struct {
	g        *Input
	checkers []namedParted
	// closed are the leases named in a closed window that no lease carried
	// open: a later operation naming one sends its key to be checked whole.
	closed *leaseSet
}

// keyWindows checks one key a window at a time.
type keyWindows struct {
	run   *windowRun
	key   string
	named bool // the nemesis names it: kept whole for its plans' checks
	// pending are the operations since the last cut, in spill order; the
	// first tent of them are the window a cut awaits confirmation of, its
	// latest time tentBound.
	pending   []lockOp
	tent      int
	tentBound int64
	// bound is the latest time in the windows checked; none before.
	bound  int64
	closed bool
	// gate skips cuts while gateLease, open, holds past gateUntil.
	gateLease string
	gateUntil int64
	redo      bool
	// last is the last lease granted in pending, tentLast in the window a
	// cut awaits: a cheap look at whether it can be cut (blocks).
	last, tentLast lastGrant

	replay *holdReplay
	part   keyPart
	// carry is each checker's carry from the key's last window.
	carry   map[string]any
	gap     noGrant
	granted bool
	lastAt  int64
	scratch []lockOp
	order   []int64  // the window's invocation indexes, each with its place
	stay    []string // the leases open after a window
	// grantTimes is grants' scratch.
	grantTimes []int64
}

func newKeyWindows(run *windowRun, key string, named bool) *keyWindows {
	kw := &keyWindows{run: run, key: key, named: named, replay: newHoldReplay(run.g.Reentrant), carry: map[string]any{},
		last: lastGrant{gone: -1, lost: -1}}
	kw.part.key = key
	return kw
}

// add takes the key's next operation; cut: it left the key with none open.
func (kw *keyWindows) add(l lockOp, cut bool) {
	if kw.redo {
		return
	}
	kw.pending = append(kw.pending, l)
	kw.last.add(&l, len(kw.pending)-1)
	if l.f == history.Release && l.lease == kw.gateLease {
		kw.gateLease = ""
	}
	if !cut || kw.named {
		return
	}
	if kw.tent > 0 {
		if len(kw.pending)-kw.tent < confirmOps {
			return
		}
		if earliest(kw.pending[kw.tent:]) > kw.tentBound && (kw.gateLease == "" || kw.tentBound >= kw.gateUntil) {
			if lease, until, blocked := kw.tentLast.blocks(kw.tentBound); blocked {
				if verifyBlocks && kw.runsOut(kw.pending[:kw.tent], kw.tentBound) {
					panic("checker: lastGrant.blocks refused a cut that the replay allows, key " + kw.key)
				}
				kw.gateLease, kw.gateUntil = lease, until // as check would, without replaying the window
			} else if kw.check(kw.pending[:kw.tent], kw.tentBound, false) {
				n := copy(kw.pending, kw.pending[kw.tent:])
				clear(kw.pending[n:])
				kw.pending = kw.pending[:n]
				kw.last.cut(kw.tent)
				kw.tent = 0
			}
		}
		if kw.redo {
			return
		}
		for i := kw.tent; i < len(kw.pending) && kw.gateLease != ""; i++ {
			if l := &kw.pending[i]; l.f == history.Release && l.lease == kw.gateLease {
				kw.gateLease = "" // released after the window the gate came from
			}
		}
	}
	if len(kw.pending) >= minWindowOps {
		kw.tent, kw.tentBound, kw.tentLast = len(kw.pending), latest(kw.pending), kw.last
	}
}

// finish checks the last window and returns the key's part, or nil when
// the key must be checked whole.
func (kw *keyWindows) finish() *keyPart {
	if kw.named || kw.redo || !kw.check(kw.pending, latest(kw.pending), true) {
		return nil
	}
	p := new(keyPart) // not a pointer into kw, which it would keep
	*p = kw.part
	if kw.gap.d > 0 {
		p.gap = kw.gap
	}
	return p
}

// check checks the window w, whose latest time is bound, and reports
// whether it was cut there: false when a lease may hold past bound, or
// the key is sent to be checked whole (redo). final: w is the key's last.
func (kw *keyWindows) check(w []lockOp, bound int64, final bool) bool {
	run, g := kw.run, kw.run.g
	if kw.closed && len(w) > 0 && earliest(w) <= kw.bound {
		kw.redo = true
		return false
	}
	for i := range w {
		if run.closed.has(w[i].name, w[i].lease) && kw.replay.open[w[i].lease] == nil {
			kw.redo = true
			return false
		}
	}
	// The leases open before the window, granted in an earlier one.
	before := make(map[string]int, len(kw.replay.open))
	for lease, l := range kw.replay.open {
		before[lease] = l.hold.Process
	}
	// The checks read the window in invocation order; the spill keeps
	// completion order. Sorting numbers, not operations, moves each
	// operation once.
	kw.order = kw.order[:0]
	for i := range w {
		kw.order = append(kw.order, int64(w[i].invIndex)<<32|int64(i))
	}
	slices.Sort(kw.order)
	kw.scratch = kw.scratch[:0]
	for _, o := range kw.order {
		kw.scratch = append(kw.scratch, w[uint32(o)])
	}
	kept, clocks, dropped := clientClocks(kw.scratch)
	var undo *holdReplay
	if !final {
		undo = kw.replay.clone()
	}
	kw.replay.expect(kw.key, len(kept)/2) // about a hold per two operations
	kw.replay.replay(kept)
	if final {
		kw.replay.closeAll(g.End)
	} else if lease, until, ok := kw.replay.runOutBy(bound); !ok {
		kw.replay, kw.gateLease, kw.gateUntil = undo, lease, until
		return false
	} else {
		kw.replay.cut()
	}
	held, expired, reentries := kw.replay.take()
	holds := held[kw.key]
	in := &Input{Faults: g.Faults, Phases: g.Phases, End: g.End, Reentrant: g.Reentrant, nemesis: g.nemesis,
		locks: kept, Holds: map[string][]Hold{kw.key: holds}, ExpiredOnArrival: expired, Reentries: reentries}
	p := &kw.part
	p.clocks, p.dropped = append(p.clocks, clocks...), append(p.dropped, dropped...)
	p.expired = append(p.expired, expired...)
	p.stats.Reentries += len(reentries)
	lockStats(&p.stats, kept)
	kw.grants(kept)
	if p.early == nil {
		p.early = earlyOp(g.Phases, kept)
	}
	open := func(lease string) bool { return kw.replay.open[lease] != nil }
	whole := false
	at := PartAt{Key: kw.key, Before: func(lease string) (int, bool) { p, ok := before[lease]; return p, ok },
		Open: open, Last: final, CheckWhole: func() { whole = true }}
	for _, c := range run.checkers {
		at.Carry = kw.carry[c.name]
		part, carry := c.Part(in, at)
		p.addPart(c.name, part)
		kw.carry[c.name] = carry
	}
	if whole {
		kw.redo = true
		return false
	}
	// The few leases usually left open are compared by name, not looked
	// up in the replay's map once per operation.
	kw.stay = kw.stay[:0]
	for lease := range kw.replay.open {
		kw.stay = append(kw.stay, lease)
	}
	few := len(kw.stay) <= 8
	for i := range w {
		if few && !slices.Contains(kw.stay, w[i].lease) || !few && !open(w[i].lease) {
			run.closed.add(w[i].name, w[i].lease)
		}
	}
	kw.bound, kw.closed = max(kw.bound, bound), true
	if !final {
		windowCounts.cuts.Add(1)
	}
	return true
}

// lastGrant is the last ok acquire in a key's pending operations (at,
// their place) and the place of the first release or loss of its lease
// after it (gone; -1 for none). A window in which that lease is granted
// and not given up, and whose TTL runs past the window's bound, cannot be
// cut: the replay would leave it open past the bound (runOutBy). Most
// windows a busy key could be cut at are blocked so, and seeing it here
// spares replaying the window to find it out. A loss is client-stamped
// and may be recorded before the grant it ends: a window with one
// (lost, its place; -1 for none) is left to the replay.
type lastGrant struct {
	lease          string
	at, gone, lost int
	until          int64
}

func (g *lastGrant) add(l *lockOp, at int) {
	switch {
	case l.f == history.Lost:
		g.lost = at
	case l.f == history.Acquire && l.outcome == history.OK:
		g.lease, g.at, g.gone, g.until = l.lease, at, -1, expiry(l.from(), l.ttl)
	}
	if g.lease != "" && g.gone < 0 && l.lease == g.lease && (l.f == history.Release || l.f == history.Lost && l.outcome == history.OK) {
		g.gone = at // as the replay's events close a lease
	}
}

// blocks reports whether a window of operations whose last grant is g
// and whose latest time is bound surely leaves the lease open past bound.
func (g *lastGrant) blocks(bound int64) (lease string, until int64, blocked bool) {
	if g.lease == "" || g.gone >= 0 || g.lost >= 0 || g.until <= bound {
		return "", 0, false
	}
	return g.lease, g.until, true
}

// cut drops the first n pending operations, checked.
func (g *lastGrant) cut(n int) {
	if g.lost -= n; g.lost < 0 {
		g.lost = -1
	}
	if g.at < n {
		g.lease, g.gone = "", -1
		return
	}
	g.at -= n
	if g.gone >= 0 {
		g.gone -= n
	}
}

// runsOut replays w on a copy of the key's replay and reports whether
// every lease ran out by bound: whether check could cut there.
func (kw *keyWindows) runsOut(w []lockOp, bound int64) bool {
	r := kw.replay.clone()
	kept, _, _ := clientClocks(slices.Clone(w)) // the replay orders events itself
	r.replay(kept)
	_, _, ok := r.runOutBy(bound)
	return ok
}

// grants carries the longest stretch between grants over the window's.
func (kw *keyWindows) grants(locks []lockOp) {
	ts := kw.grantTimes[:0]
	defer func() { kw.grantTimes = ts[:0] }()
	for i := range locks {
		if l := &locks[i]; l.f == history.Acquire && l.outcome == history.OK && l.process >= 0 {
			ts = append(ts, l.done)
		}
	}
	slices.Sort(ts)
	for _, t := range ts {
		if d := t - kw.lastAt; kw.granted && d > kw.gap.d {
			kw.gap = noGrant{d: d, at: kw.lastAt, key: kw.key}
		}
		kw.lastAt, kw.granted = t, true
	}
}

// earlyOp is the first client operation of locks (in invocation order)
// sent before the faults phase began, if any.
func earlyOp(phases []PhaseSpan, locks []lockOp) *lockOp {
	for _, ph := range phases {
		if ph.Phase != history.PhaseFaults {
			continue
		}
		for i := range locks {
			if l := locks[i]; l.process >= 0 && l.call < ph.Start {
				return &l
			}
		}
		break
	}
	return nil
}

// times are an operation's moments: its invocation, completion and
// queueing, as far as it has them.
func times(l *lockOp, f func(int64)) {
	f(l.call)
	if l.completed() {
		f(l.done)
	}
	if l.queued > 0 {
		f(l.queued)
	}
}

func earliest(ls []lockOp) int64 {
	t := int64(math.MaxInt64)
	for i := range ls {
		times(&ls[i], func(v int64) { t = min(t, v) })
	}
	return t
}

func latest(ls []lockOp) int64 {
	t := int64(math.MinInt64)
	for i := range ls {
		times(&ls[i], func(v int64) { t = max(t, v) })
	}
	return t
}
