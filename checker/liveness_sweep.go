package checker

import (
	"cmp"
	"slices"

	"github.com/deadbolt-lab/deadbolt/history"
)

// liveWindows is liveness's check of one key a window at a time
// (window.go), finding what liveness.unavailable finds on the whole key.
// Its stretches come from one sweep over the key's spans in order of
// start, and windows come in time order, so the sweep carries over: how
// far the spans so far cover, the lease whose possible hold ends there,
// and the refusals a stretch still open may yet count.
type liveWindows struct {
	key       string
	threshold int64 // configured; 0: the key's last acquire's TTL
	ttl       int64 // that TTL so far
	covered   int64
	last      *lastLease // whose possible hold ends at covered, if known
	refusals  []span     // sorted by start
	silenced  []span     // fault windows whose refusals show nothing (silenced)
	// used is the threshold refusals were counted with; a later TTL that
	// differs (mismatch) makes the windows disagree with the whole key.
	used     int64
	usedSet  bool
	mismatch bool
	found    []Unavailability
	// pending are found stretches whose last lease is still open after
	// its window: a later release of it is the one the report names.
	pending []int
}

// lastLease is what a stretch's report says of the lease that could hold
// the key last.
type lastLease struct {
	at       int64 // where its possible hold ends
	lease    string
	by       int
	released history.Type
}

// window sweeps one window: locks in invocation order, holds its holding
// windows, end the history's (for operations that never completed, in
// the last window only). open reports whether a lease stays open after
// the window, and acquiredBy the process of an open lease's earlier
// acquire.
func (w *liveWindows) window(locks []lockOp, holds []Hold, end int64, final bool, open func(string) bool, acquiredBy func(string) (int, bool)) {
	cover, refused, last, by, released := w.spans(locks, holds, end)
	defer spansScratch.put(cover)
	defer spansScratch.put(refused)
	defer lastScratch.put(last)
	defer byScratch.put(by)
	defer releasedScratch.put(released)
	for _, i := range w.pending {
		if t, ok := released[w.found[i].LastLease]; ok {
			w.found[i].Release = t
		}
	}
	if w.last != nil {
		if t, ok := released[w.last.lease]; ok {
			w.last.released = t
		}
	}
	facts := func(at int64) *lastLease {
		lease, ok := last[at]
		if !ok {
			if w.last != nil && w.last.at == at {
				return w.last
			}
			return nil
		}
		f := &lastLease{at: at, lease: lease, released: released[lease]}
		if p, ok := by[lease]; ok {
			f.by = p
		} else if p, ok := acquiredBy(lease); ok {
			f.by = p
		}
		return f
	}
	slices.SortFunc(refused, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	w.refusals = append(w.refusals, refused...)
	gs, covered := sweep(cover, w.covered, end, final)
	threshold := w.threshold
	if threshold == 0 {
		threshold = w.ttl
	}
	if len(w.refusals) > 0 {
		w.use(threshold)
		for _, g := range gs {
			u := Unavailability{Key: w.key, From: g.from, To: g.to}
			if from := g.from + threshold; from < g.to {
				u.Refused = refusedWithin(w.refusals, from, g.to)
			}
			if u.Refused < 2 {
				continue
			}
			if f := facts(g.from); f != nil {
				u.LastLease, u.LastProcess, u.Release = f.lease, f.by, f.released
				if open(f.lease) {
					w.pending = append(w.pending, len(w.found))
				}
			}
			w.found = append(w.found, u)
		}
	}
	w.covered, w.last = covered, facts(covered)
	w.prune(threshold, open)
}

// prune keeps the refusals and pending findings a later window may still
// need: a refusal counts only in a stretch that starts at least a
// threshold before it, and stretches start no earlier than covered; a
// finding stays pending while its last lease is open.
func (w *liveWindows) prune(threshold int64, open func(string) bool) {
	covered := w.covered
	keep := w.refusals[:0]
	for _, r := range w.refusals {
		if r.from >= covered+threshold {
			keep = append(keep, r)
		}
	}
	w.refusals = keep
	kept := w.pending[:0]
	for _, i := range w.pending {
		if open(w.found[i].LastLease) {
			kept = append(kept, i)
		}
	}
	w.pending = kept
}

var (
	spansScratch    scratchSlice[span]
	lastScratch     scratchMap[int64, string]
	byScratch       scratchMap[string, int]
	releasedScratch scratchMap[string, history.Type]
)

// spans are one window's spans: cover, what kept the key taken or may
// have (holds, acquires and renewals not surely failed, to their TTL);
// refused, the refused acquires; with each cover's end's lease (last), the
// process of each lease acquired (by) and each release's outcome.
func (w *liveWindows) spans(locks []lockOp, holds []Hold, end int64) (cover, refused []span, last map[int64]string, by map[string]int, released map[string]history.Type) {
	cover, refused = spansScratch.get(len(holds)+len(locks)), spansScratch.get(0)
	for _, h := range holds {
		cover = append(cover, span{h.AcquiredAt, h.Until})
	}
	// Sized for a lease per two operations, as refreshesOf's.
	leases := len(locks) / 2
	last, by, released = lastScratch.get(leases), byScratch.get(leases), releasedScratch.get(leases)
	for i := range locks {
		l := &locks[i]
		switch effect, sp := liveEffectOf(l, end); effect {
		case liveReleases:
			released[l.lease] = l.outcome
		case liveHeld:
			if l.f == history.Acquire {
				by[l.lease] = int(l.process)
			}
			cover = append(cover, sp)
			last[sp.to] = l.lease
		case liveRefused:
			if !overlapsAny(w.silenced, sp) {
				refused = append(refused, sp)
			}
		case liveAnswered:
			cover = append(cover, sp)
		}
		if l.f == history.Acquire && l.ttl > 0 {
			w.ttl = l.ttl
		}
	}
	return cover, refused, last, by, released
}

// use records the threshold refusals were counted with.
func (w *liveWindows) use(threshold int64) {
	if w.usedSet && w.used != threshold {
		w.mismatch = true
	}
	w.used, w.usedSet = threshold, true
}

// exact reports whether the windows found what the whole key would: the
// threshold they counted with is the key's last TTL.
func (w *liveWindows) exact() bool {
	return !w.mismatch && (!w.usedSet || w.threshold != 0 || w.used == w.ttl)
}

// sweep is gaps continued from covered: the stretches spans (sorted here)
// leave uncovered after it, the last one to end only when final, and how
// far they cover.
func sweep(spans []span, covered, end int64, final bool) ([]span, int64) {
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	var out []span
	for _, s := range spans {
		if s.from > covered {
			out = append(out, span{covered, s.from})
		}
		covered = max(covered, s.to)
	}
	if final && covered < end {
		out = append(out, span{covered, end})
	}
	return out, covered
}
