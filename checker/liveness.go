package checker

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
)

func init() {
	RegisterScoped("liveness", "a key that stays taken when no lease can explain it (a holder crashed with no TTL on the key)", LockService,
		func(o Options) Checker { return liveness{threshold: o.LivenessThreshold} })
}

// liveness finds keys that stayed taken after every lease that could hold
// them had run out: a lock without a TTL whose holder crashed, or a SETNX
// whose EXPIRE never came. That is a liveness failure, not a double hold:
// nobody got in, nobody could.
//
// A key is explained while a holding window covers it, or while any ok or
// unknown acquire or renewal might hold it on the server: from its
// invocation until its TTL after it was last heard of (its completion, or
// the end of the history when it never completed). In every stretch
// nothing explains, acquires refused because the key was taken, invoked at
// least the threshold after the stretch began and answered before it
// ended, show the key stuck.
// Acquires that could not reach the service (not refused) never count: an
// outage is not a stuck key. Nor do refusals while a fault kept a node
// from answering clients (silenced): a lock may say "taken" for "could not
// ask" then (rueidislock v1.0.40 does), and nobody could have got in.
type liveness struct{ threshold time.Duration }

// Unavailability is one stretch in which a key stayed taken unexplained.
type Unavailability struct {
	Key string `json:"key"`
	// From is when the last lease that could explain the key ran out; To
	// the next possible grant, or the end of the history.
	From int64 `json:"from"`
	To   int64 `json:"to"`
	// Refused counts the acquires refused in the stretch after the threshold.
	Refused int `json:"refused"`
	// LastLease is the lease whose possible hold ended at From, if one
	// did, and LastProcess the process that acquired it.
	LastLease   string `json:"last_lease,omitempty"`
	LastProcess int    `json:"last_process,omitempty"`
	// Release is the outcome of that lease's release, empty without one.
	Release history.Type `json:"release,omitempty"`
}

type span struct{ from, to int64 }

func (c liveness) Check(in *Input) Result { return checkWhole(c, in) }

// Part finds a whole key's stretches at once, and a window's by carrying
// the sweep on (liveness_sweep.go); a key whose threshold changed after
// refusals were counted with it is checked whole.
func (c liveness) Part(in *Input, at PartAt) (any, any) {
	if !at.Windowed() {
		return c.unavailable(in), nil
	}
	w, _ := at.Carry.(*liveWindows)
	if w == nil {
		w = &liveWindows{key: at.Key, threshold: int64(c.threshold), silenced: silenced(in.Faults)}
	}
	w.window(in.locks, in.Holds[at.Key], in.End, at.Last, at.Open, func(lease string) (int, bool) {
		p, ok := at.Before(lease)
		return p, ok && p >= 0
	})
	if !at.Last {
		return nil, w
	}
	if !w.exact() {
		at.CheckWhole()
		return nil, w
	}
	return w.found, w
}

// Merge takes the parts' stretches; a window before a key's last has none
// (its stretches may yet learn how their lease was released).
func (liveness) Merge(whole *Input, parts []any) Result {
	var found []Unavailability
	for _, p := range parts {
		u, _ := p.([]Unavailability)
		found = append(found, u...)
	}
	sortUnavailable(found)
	return livenessResult(found, whole.End)
}

// liveEffect is what one lock operation says of its key's liveness.
type liveEffect int

const (
	liveNone     liveEffect = iota
	liveReleases            // a release: its outcome tells how a stretch's last lease ended
	liveHeld                // may have held the key until its span's end (a TTL after it was last heard of)
	liveRefused             // an acquire refused over its span: the key was taken
	liveAnswered            // a failure that is no refusal: may have held the key until it answered
)

// liveEffectOf reads one lock operation for liveness: the whole-history
// sweep (unavailable) and the windowed one (liveWindows) both read it so.
// end is the history's, for an operation that never completed.
func liveEffectOf(l *lockOp, end int64) (liveEffect, span) {
	switch {
	case l.f == history.Release:
		return liveReleases, span{}
	case (l.f != history.Acquire && l.f != history.Renew) || l.process < 0:
		return liveNone, span{}
	case l.outcome != history.Fail:
		// An ok or unknown acquire or renewal may have held the key on
		// the server from its invocation until a TTL after it was last
		// heard of, whether or not its holder counted on it (a lease
		// granted after its TTL has no window, yet held the key).
		heard := end // never completed: it may take effect until the end
		if l.completed() {
			heard = l.done
		}
		until := int64(never)
		if ttl := l.ttlLongest(); ttl > 0 { // the key may live as long as either says
			until = heard + ttl
		}
		return liveHeld, span{l.call, until}
	case l.f == history.Acquire && l.refused:
		return liveRefused, span{l.call, l.done}
	case l.f == history.Acquire:
		// A failure that is no refusal may have held the key until it
		// answered: simple-wait takes the key, then rolls it back when
		// no replica acknowledged; RedLock undoes a minority it got.
		return liveAnswered, span{l.call, l.done}
	}
	return liveNone, span{}
}

// unavailable finds the stretches when a key stayed taken, in order.
func (c liveness) unavailable(in *Input) []Unavailability {
	cover := map[string][]span{}
	ttls := map[string]int64{}
	last := map[string]map[int64]string{} // key -> end of a possible hold -> its lease
	// Sized for a lease per two lock operations: growing a map of a key's
	// every lease costs more than the rest of the check.
	acquiredBy := make(map[string]int, len(in.locks)/2) // lease -> acquiring process
	for key, hs := range in.Holds {
		for _, h := range hs {
			cover[key] = append(cover[key], span{h.AcquiredAt, h.Until})
		}
	}
	released := make(map[string]history.Type, len(in.locks)/2) // lease -> its release's outcome
	refused := map[string][]span{}                             // key -> intervals of refused acquires
	outages := silenced(in.Faults)
	for i := range in.locks {
		l := &in.locks[i]
		switch effect, sp := liveEffectOf(l, in.End); effect {
		case liveReleases:
			released[l.lease] = l.outcome
		case liveHeld:
			if l.f == history.Acquire {
				acquiredBy[l.lease] = int(l.process)
			}
			cover[l.key] = append(cover[l.key], sp)
			if last[l.key] == nil {
				last[l.key] = map[int64]string{}
			}
			last[l.key][sp.to] = l.lease
		case liveRefused:
			if !overlapsAny(outages, sp) {
				refused[l.key] = append(refused[l.key], sp)
			}
		case liveAnswered:
			cover[l.key] = append(cover[l.key], sp)
		}
		if l.f == history.Acquire && l.ttl > 0 {
			ttls[l.key] = l.ttl
		}
	}
	var found []Unavailability
	for key, refusals := range refused {
		slices.SortFunc(refusals, func(a, b span) int { return cmp.Compare(a.from, b.from) })
		threshold := int64(c.threshold)
		if threshold == 0 {
			threshold = ttls[key]
		}
		for _, g := range gaps(cover[key], in.End) {
			u := Unavailability{Key: key, From: g.from, To: g.to}
			if from := g.from + threshold; from < g.to {
				u.Refused = refusedWithin(refusals, from, g.to)
			}
			if u.Refused < 2 {
				continue
			}
			if l, ok := last[key][g.from]; ok {
				u.LastLease, u.LastProcess, u.Release = l, acquiredBy[l], released[l]
			}
			found = append(found, u)
		}
	}
	sortUnavailable(found)
	return found
}

// livenessResult is the verdict on the stretches found, in order; end is
// the history's.
func livenessResult(found []Unavailability, end int64) Result {
	r := newResult("liveness")
	if found == nil {
		found = []Unavailability{}
	}
	r.Details = found
	r.Metrics["liveness_failures"] = int64(len(found))
	var longest int64
	for _, u := range found {
		longest = max(longest, u.To-u.From)
		r.Anomalies = append(r.Anomalies, Anomaly{Kind: KindLiveness, At: u.From, Key: u.Key, Leases: nonEmpty(u.LastLease), Text: u.String(end)})
	}
	r.Metrics["unavailable_ms"] = longest / int64(time.Millisecond)
	if len(found) == 0 {
		r.Reason = "no key stayed taken after every lease that could hold it had run out."
		return r
	}
	r.Verdict = Invalid
	u := found[0]
	r.Reason = fmt.Sprintf("the lock failed liveness: %s stayed taken with no lease to explain it (key %q for %s from %s).",
		Plural(len(found), "key stretch"), u.Key, at(u.To-u.From), at(u.From))
	return r
}

// sortUnavailable orders stretches by their start, then key.
func sortUnavailable(found []Unavailability) {
	sort.Slice(found, func(i, j int) bool {
		if found[i].From != found[j].From {
			return found[i].From < found[j].From
		}
		return found[i].Key < found[j].Key
	})
}

// silenced are the fault windows in which a node may not have answered
// its clients: a fault that silences what it strikes, not only between
// nodes, nor on clients alone. Read from what a fault declares it does.
func silenced(ws []FaultWindow) []span {
	var out []span
	for _, w := range ws {
		if e := w.Effects; e.Silences && !e.BetweenNodes && !e.OnClients {
			out = append(out, span{w.Start, w.End})
		}
	}
	return out
}

// overlapsAny reports whether sp meets any of spans (closed intervals).
func overlapsAny(spans []span, sp span) bool {
	for _, o := range spans {
		if sp.from <= o.to && o.from <= sp.to {
			return true
		}
	}
	return false
}

// refusedWithin counts the refusals (sorted by invocation) that began and
// ended within [from, to). A refusal happened somewhere in its interval:
// one that reaches past the stretch may have met the next lease.
func refusedWithin(refusals []span, from, to int64) int {
	lo, _ := slices.BinarySearchFunc(refusals, from, func(r span, t int64) int { return cmp.Compare(r.from, t) })
	n := 0
	for _, r := range refusals[lo:] {
		if r.from >= to {
			break
		}
		if r.to <= to {
			n++
		}
	}
	return n
}

func (u Unavailability) String(end int64) string {
	to := at(u.To)
	if u.To == end {
		to += ", the end of the history"
	}
	s := fmt.Sprintf("key %q stayed taken with no lease to explain it for %s (%s to %s): %s refused",
		u.Key, at(u.To-u.From), at(u.From), to, Plural(u.Refused, "acquire"))
	if u.LastLease != "" {
		how := map[history.Type]string{
			"":           "without a release",
			history.OK:   "after a release that succeeded",
			history.Fail: "after its release failed",
			history.Info: "after a release with an unknown outcome",
		}[u.Release]
		s += fmt.Sprintf("; the last lease that could hold it, %s of process %d, ran out at %s %s", u.LastLease, u.LastProcess, at(u.From), how)
	}
	return s
}

// gaps are the stretches of [0, end) that no span covers, each running to
// the start of the next span or to end. The stretch before the first span
// counts too: a key can be stuck from an earlier run of the same name.
func gaps(spans []span, end int64) []span {
	sort.Slice(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	var out []span
	var covered int64
	for _, s := range spans {
		if s.from > covered {
			out = append(out, span{covered, s.from})
		}
		covered = max(covered, s.to)
	}
	if covered < end {
		out = append(out, span{covered, end})
	}
	return out
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
