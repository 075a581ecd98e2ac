package checker

import (
	"cmp"
	"slices"
	"sort"

	"github.com/deadbolt-lab/deadbolt/history"
)

// The judge does not take the lock's word. A lease is named by the
// harness (history.Op.Lease), and its holding window is computed from the
// harness's own clock and the TTL the lock was configured with: from the
// acquire's ok to the earliest of the release's invocation, the loss the
// lock told its holder of (a holder that learns it stops), and the last
// acquire-or-renewal invocation + TTL. The server cannot have expired the
// lease before then, so two windows that overlap on one key are two
// clients holding it at once. The token and the deadline the lock reports
// are recorded and shown, never used here.

// Hold is one holding window.
type Hold struct {
	// Lease is the harness's name of the grant; Owner the lock's token.
	Lease   string `json:"lease"`
	Process int    `json:"process"`
	Owner   string `json:"owner,omitempty"`
	Fence   int64  `json:"fence,omitempty"`
	// AcquiredAt is the acquire's ok, or the ok of a renewal that revived
	// a lease after its window had closed.
	AcquiredAt int64 `json:"acquired_at"`
	Until      int64 `json:"until"`
	// AcquireIndex is the history index of the acquire's ok.
	AcquireIndex int `json:"acquire_index"`
	// Client is the client the lease belongs to (its owner's first
	// process): a reentrant lock's holds of one client are one hold.
	Client int `json:"client"`
}

// Holds computes every lease's holding windows, per key, in order of
// acquisition.
func Holds(ops []history.Op) (map[string][]Hold, error) {
	in, err := NewInput(ops)
	if err != nil {
		return nil, err
	}
	return in.Holds, nil
}

// leaseEvent is a moment that changes what a client believes it holds:
// an ok acquire or renewal (at its completion), or a release (at its
// invocation), of the lock operation locks[lock].
type leaseEvent struct {
	time  int64
	index int32 // history index, which breaks ties in time
	lock  int32
}

type openLease struct {
	key      string
	hold     Hold
	deadline int64
	ttl      int64
	first    bool // the acquire's own segment, not a revival
	// dormant: the segment was emitted when a window closed, its lease
	// already run out (holdReplay.cut); a renewal may still revive it.
	dormant bool
}

// holdsByKey replays acquires, renewals, releases and losses the lock told
// its holder of, in time order (client-stamped renewals and losses may be
// recorded after later operations).
//
// Only ok acquires open a lease: an info acquire was never confirmed, so
// its client moved on without believing it held anything. A release ends
// the hold at its invocation whatever its outcome, because from then on the
// client no longer treats the lock as held. An ok renewal invoked while the
// window is open extends it; one invoked after it closed revives the lease
// as a new window from the renewal's ok. A lease whose first window is
// empty arrived after its TTL had passed: it is returned in expired.
//
// For a reentrant lock, a client's ok acquire, ok renewal or ok release of
// a key it holds under other leases also resets the key's TTL on the
// server (Redisson's scripts PEXPIRE it), so it extends those leases'
// windows as a renewal would; such an acquire is a re-entry, returned in
// reentries. An unknown one extends nothing: a window is never longer
// than the server surely kept it.
func holdsByKey(locks []lockOp, end int64, reentrant bool) (out map[string][]Hold, expired []string, reentries map[string]bool) {
	r := newHoldReplay(reentrant)
	r.replay(locks)
	r.closeAll(end)
	return r.take()
}

// holdReplay is holdsByKey's replay, kept between calls so that a key can
// be replayed a window at a time (window.go): the leases still open carry
// over, with the holds, expired leases and re-entries found since take.
type holdReplay struct {
	reentrant bool
	out       map[string][]Hold
	expired   []string
	reentries map[string]bool
	open      map[string]*openLease
	// mine is each client's open leases of each key, for re-entry.
	mine map[keyHolder]map[string]*openLease
	// free are leases closed, for the next acquires to reuse.
	free []*openLease
}

type keyHolder struct {
	client int32
	key    string
}

func newHoldReplay(reentrant bool) *holdReplay {
	return &holdReplay{reentrant: reentrant, out: map[string][]Hold{}, reentries: map[string]bool{},
		open: map[string]*openLease{}, mine: map[keyHolder]map[string]*openLease{}}
}

func (r *holdReplay) extend(op *lockOp, except string) {
	for lease, o := range r.mine[keyHolder{op.client, op.key}] {
		if lease != except && op.call < o.deadline {
			o.deadline = max(o.deadline, expiry(op.call, firstOf(op.ttl, o.ttl)))
		}
	}
}

func (r *holdReplay) emit(l *openLease, until, end int64) {
	if l.dormant {
		return // emitted when its window closed, with this very until
	}
	if until == never {
		until = end // a lease without a TTL lasts as long as the history
	}
	if until > l.hold.AcquiredAt {
		l.hold.Until = until
		r.out[l.key] = append(r.out[l.key], l.hold)
	} else if l.first {
		r.expired = append(r.expired, l.hold.Lease)
	}
}

// replay takes locks' events, which come after every event replayed
// before.
func (r *holdReplay) replay(locks []lockOp) {
	open, reentrant := r.open, r.reentrant
	evs := leaseEvents(locks)
	defer leaseEventScratch.put(evs)
	for _, ev := range evs {
		op := &locks[ev.lock]
		l := open[op.lease]
		switch op.f {
		case history.Acquire:
			if l != nil {
				continue // one grant per lease id (leaseBook refuses a second)
			}
			o := r.newLease()
			*o = openLease{
				key: op.key,
				hold: Hold{Lease: op.lease, Process: int(op.process), Owner: op.owner, Fence: op.fence,
					AcquiredAt: ev.time, AcquireIndex: int(ev.index), Client: int(op.client)},
				deadline: expiry(op.from(), op.ttl), ttl: op.ttl, first: true,
			}
			open[op.lease] = o
			if reentrant {
				h := keyHolder{op.client, op.key}
				for _, other := range r.mine[h] {
					if op.call < other.deadline {
						r.reentries[op.lease] = true // it still held the key when it asked
					}
				}
				r.extend(op, "")
				if r.mine[h] == nil {
					r.mine[h] = map[string]*openLease{}
				}
				r.mine[h][op.lease] = o
			}
		case history.Renew:
			if l == nil {
				continue // renewing a lease this client never held or already released
			}
			ttl := firstOf(op.ttl, l.ttl)
			if reentrant {
				r.extend(op, op.lease)
			}
			if op.call < l.deadline {
				l.deadline = max(l.deadline, expiry(op.call, ttl))
				continue
			}
			r.emit(l, l.deadline, 0) // a deadline never is never passed
			l.hold.AcquiredAt, l.deadline, l.first, l.dormant = ev.time, expiry(op.call, ttl), false, false
		case history.Release, history.Lost:
			// A holder that was told its lease is gone stops there, as one
			// that releases it does.
			if l != nil {
				r.emit(l, min(ev.time, l.deadline), 0)
				delete(open, op.lease)
				if reentrant {
					delete(r.mine[keyHolder{op.client, op.key}], op.lease)
				}
				r.free = append(r.free, l) // nothing points at it now
			}
			if reentrant && op.f == history.Release && op.outcome == history.OK {
				r.extend(op, op.lease) // the holds left, if any, got a new TTL
			}
		}
	}
}

// expect makes room for n holds of key before the next take: a window's
// holds then grow once, not by doubling up to their number.
func (r *holdReplay) expect(key string, n int) {
	if r.out[key] == nil {
		r.out[key] = make([]Hold, 0, n)
	}
}

// newLease is a lease to fill, one closed before if there is one.
func (r *holdReplay) newLease() *openLease {
	if n := len(r.free); n > 0 {
		l := r.free[n-1]
		r.free = r.free[:n-1]
		return l
	}
	return new(openLease)
}

// closeAll ends the replay at the history's end: the leases still open
// hold until their deadline.
func (r *holdReplay) closeAll(end int64) {
	for _, l := range r.open {
		r.emit(l, l.deadline, end)
	}
}

// take returns what the replay found since the last take, each key's
// holds in order of acquisition, and starts afresh.
func (r *holdReplay) take() (out map[string][]Hold, expired []string, reentries map[string]bool) {
	out, expired, reentries = r.out, r.expired, r.reentries
	for _, hs := range out {
		sort.Slice(hs, func(i, j int) bool {
			if hs[i].AcquiredAt != hs[j].AcquiredAt {
				return hs[i].AcquiredAt < hs[j].AcquiredAt
			}
			return hs[i].AcquireIndex < hs[j].AcquireIndex
		})
	}
	sort.Strings(expired)
	r.out, r.expired, r.reentries = map[string][]Hold{}, nil, map[string]bool{}
	return out, expired, reentries
}

var leaseEventScratch scratchSlice[leaseEvent]

func leaseEvents(locks []lockOp) []leaseEvent {
	evs := leaseEventScratch.get(len(locks))
	for i := range locks {
		l := &locks[i]
		switch {
		case l.f == history.Release:
			evs = append(evs, leaseEvent{time: l.call, index: l.invIndex, lock: int32(i)})
		case l.f == history.Lost && l.outcome == history.OK:
			evs = append(evs, leaseEvent{time: l.call, index: l.invIndex, lock: int32(i)})
		case (l.f == history.Acquire || l.f == history.Renew) && l.outcome == history.OK:
			evs = append(evs, leaseEvent{time: l.done, index: l.doneIndex, lock: int32(i)})
		}
	}
	slices.SortFunc(evs, func(a, b leaseEvent) int {
		return cmp.Or(cmp.Compare(a.time, b.time), cmp.Compare(a.index, b.index))
	})
	return evs
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

// runOutBy reports whether every lease still open ran out by bound, so
// that no later event can extend or overlap it; otherwise it names the
// open lease that holds longest, and until when.
func (r *holdReplay) runOutBy(bound int64) (blocker string, until int64, ok bool) {
	for lease, l := range r.open {
		if l.deadline > bound && (blocker == "" || l.deadline > until) {
			blocker, until = lease, l.deadline
		}
	}
	return blocker, until, blocker == ""
}

// cut closes a window whose leases all ran out (runOutBy): each open
// lease's segment is emitted now, as its release, its revival or the end
// of the history would emit it, and it stays open for those.
func (r *holdReplay) cut() {
	for _, l := range r.open {
		r.emit(l, l.deadline, 0)
		l.dormant = true
	}
}

// clone is a copy of the replay's open leases, to go back to.
func (r *holdReplay) clone() *holdReplay {
	c := newHoldReplay(r.reentrant)
	for lease, l := range r.open {
		cp := *l
		c.open[lease] = &cp
	}
	for h, ls := range r.mine {
		m := make(map[string]*openLease, len(ls))
		for lease := range ls {
			m[lease] = c.open[lease]
		}
		c.mine[h] = m
	}
	return c
}
