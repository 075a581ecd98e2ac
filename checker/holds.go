package checker

import (
	"fmt"
	"sort"
	"strings"

	"github.com/deadbolt-lab/deadbolt/history"
)

// Hold is one holding interval: a client believed it held the lock from
// AcquiredAt (the acquire's ok) until Until, the earlier of its release's
// invocation and its lease's validity deadline.
type Hold struct {
	Process int    `json:"process"`
	Owner   string `json:"owner"`
	Fence   int64  `json:"fence,omitempty"`
	// AcquiredAt is the acquire's ok, or the ok of a renewal that revived
	// a lease after its deadline had passed.
	AcquiredAt int64 `json:"acquired_at"`
	Until      int64 `json:"until"`
	// AcquireIndex is the history index of the acquire's ok.
	AcquireIndex int `json:"acquire_index"`
}

// DoubleHold is two owners holding one key at once: a mutual-exclusion
// violation by the lock service. First is the hold that began earlier.
type DoubleHold struct {
	Key          string `json:"key"`
	First        Hold   `json:"first"`
	Second       Hold   `json:"second"`
	OverlapStart int64  `json:"overlap_start"`
	OverlapEnd   int64  `json:"overlap_end"`
	// Faults names the fault windows that overlap the double hold.
	Faults []string `json:"faults,omitempty"`
}

// String is the anomaly line for reports.
func (d DoubleHold) String() string {
	s := fmt.Sprintf("double hold on key %q: %s and %s both held it from %s to %s (%s)",
		d.Key, holder(d.First), holder(d.Second), at(d.OverlapStart), at(d.OverlapEnd),
		at(d.OverlapEnd-d.OverlapStart))
	if len(d.Faults) > 0 {
		s += " during " + strings.Join(d.Faults, ", ")
	}
	return s
}

func holder(h Hold) string {
	s := fmt.Sprintf("process %d (owner %s", h.Process, h.Owner)
	if h.Fence != 0 {
		s += fmt.Sprintf(", fence %d", h.Fence)
	}
	return s + fmt.Sprintf(", acquired at %s by op %d)", at(h.AcquiredAt), h.AcquireIndex)
}

// Holds computes every client's holding intervals, per key, in order of
// acquisition.
func Holds(ops []history.Op) (map[string][]Hold, error) {
	pairs, err := history.Pair(ops)
	if err != nil {
		return nil, err
	}
	return holdsByKey(pairs, historyEnd(ops)), nil
}

// DoubleHolds finds every pair of holds by different owners that overlap on
// one key, ordered by the start of the overlap, naming the faults active
// during each.
func DoubleHolds(ops []history.Op) ([]DoubleHold, error) {
	pairs, err := history.Pair(ops)
	if err != nil {
		return nil, err
	}
	return findDoubleHolds(holdsByKey(pairs, historyEnd(ops)), FaultWindows(ops)), nil
}

// leaseEvent is a moment that changes what a client believes it holds.
type leaseEvent struct {
	index    int // history index of the op, which orders events
	time     int64
	f        history.F // Acquire and Renew: an ok; Release: the invocation
	key      string
	owner    string
	process  int
	fence    int64
	deadline int64
}

type leaseID struct{ key, owner string }

type lease struct {
	hold     Hold
	deadline int64
}

// holdsByKey replays acquires, renewals and releases in history order.
//
// Only ok acquires open a lease: an info acquire was never confirmed, so
// its client moved on without believing it held anything. A release ends
// the hold at its invocation whatever its outcome, because from then on the
// client no longer treats the lock as held. An ok renewal moves the
// deadline; one that returns after the deadline had already passed revives
// the lease as a new hold from the renewal's ok, since the client held
// nothing in between.
func holdsByKey(pairs []history.Operation, end int64) map[string][]Hold {
	events := leaseEvents(pairs)
	out := map[string][]Hold{}
	open := map[leaseID]*lease{}
	emit := func(id leaseID, l *lease, until int64) {
		delete(open, id)
		if until == never {
			until = end // a lease without a TTL lasts as long as the history
		}
		if until > l.hold.AcquiredAt {
			l.hold.Until = until
			out[id.key] = append(out[id.key], l.hold)
		}
	}
	for _, ev := range events {
		id := leaseID{ev.key, ev.owner}
		switch ev.f {
		case history.Acquire, history.Renew:
			l := open[id]
			if l != nil && ev.time <= l.deadline {
				l.deadline = ev.deadline
				continue
			}
			h := Hold{Process: ev.process, Owner: ev.owner, Fence: ev.fence, AcquiredAt: ev.time, AcquireIndex: ev.index}
			if l != nil {
				emit(id, l, l.deadline)
				if ev.f == history.Renew {
					h.Process, h.Fence, h.AcquireIndex = l.hold.Process, l.hold.Fence, l.hold.AcquireIndex
				}
			} else if ev.f == history.Renew {
				continue // renewing a lease this client never held or already released
			}
			open[id] = &lease{hold: h, deadline: ev.deadline}
		case history.Release:
			if ev.owner == "" {
				id = ownLease(open, ev)
			}
			if l := open[id]; l != nil {
				emit(id, l, min(ev.time, l.deadline))
			}
		}
	}
	for id, l := range open {
		emit(id, l, l.deadline)
	}
	for _, hs := range out {
		sort.Slice(hs, func(i, j int) bool {
			if hs[i].AcquiredAt != hs[j].AcquiredAt {
				return hs[i].AcquiredAt < hs[j].AcquiredAt
			}
			return hs[i].AcquireIndex < hs[j].AcquireIndex
		})
	}
	return out
}

// ownLease matches a release that names no owner to the lease its process
// holds on the key.
func ownLease(open map[leaseID]*lease, ev leaseEvent) leaseID {
	for id, l := range open {
		if id.key == ev.key && l.hold.Process == ev.process {
			return id
		}
	}
	return leaseID{}
}

func leaseEvents(pairs []history.Operation) []leaseEvent {
	var evs []leaseEvent
	for _, p := range pairs {
		inv, c := p.Invoke, p.Complete
		switch {
		case inv.F == history.Release:
			owner := inv.Owner
			if owner == "" && c != nil {
				owner = c.Owner
			}
			evs = append(evs, leaseEvent{index: inv.Index, time: inv.Time, f: inv.F, key: inv.Key, owner: owner, process: inv.Process})
		case (inv.F == history.Acquire || inv.F == history.Renew) && p.Outcome() == history.OK:
			evs = append(evs, leaseEvent{
				index: c.Index, time: c.Time, f: inv.F, key: inv.Key, process: inv.Process,
				owner:    firstOf(c.Owner, inv.Owner),
				fence:    firstOf(c.Fence, inv.Fence),
				deadline: validity(inv, *c),
			})
		}
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].index < evs[j].index })
	return evs
}

// validity is the client-side deadline of an ok acquire or renewal. Without
// a recorded Deadline it falls back to invoke + TTL, the earliest the server
// can expire the lease; without a TTL the lease does not expire.
func validity(inv, ok history.Op) int64 {
	if ok.Deadline != 0 {
		return ok.Deadline
	}
	return expiry(inv.Time, firstOf(ok.TTL, inv.TTL))
}

// expiry is t + ttl, where a missing TTL or an unknown t means never.
func expiry(t, ttl int64) int64 {
	if ttl <= 0 || t == never || t > never-ttl {
		return never
	}
	return t + ttl
}

func firstOf[T comparable](vs ...T) T {
	var zero T
	for _, v := range vs {
		if v != zero {
			return v
		}
	}
	return zero
}

// findDoubleHolds sweeps each key's holds in order of acquisition, keeping
// the holds still active at each new start, so the cost is the sort plus the
// overlaps found rather than every pair of holds.
func findDoubleHolds(byKey map[string][]Hold, faults []FaultWindow) []DoubleHold {
	var out []DoubleHold
	for key, hs := range byKey {
		var active []Hold
		for _, h := range hs {
			kept := active[:0]
			for _, a := range active {
				if a.Until > h.AcquiredAt {
					kept = append(kept, a)
				}
			}
			active = kept
			for _, a := range active {
				if a.Owner == h.Owner {
					continue // one lease's own segments never overlap; kept as the definition
				}
				d := DoubleHold{Key: key, First: a, Second: h, OverlapStart: h.AcquiredAt, OverlapEnd: min(a.Until, h.Until)}
				d.Faults = FaultsDuring(faults, d.OverlapStart, d.OverlapEnd)
				out = append(out, d)
			}
			active = append(active, h)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.OverlapStart != b.OverlapStart {
			return a.OverlapStart < b.OverlapStart
		}
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		if a.First.AcquireIndex != b.First.AcquireIndex {
			return a.First.AcquireIndex < b.First.AcquireIndex
		}
		return a.Second.AcquireIndex < b.Second.AcquireIndex
	})
	return out
}
