package checker

import (
	"fmt"
	"strings"

	"github.com/deadbolt-lab/deadbolt/history"
)

// A strike is one fault struck inside a client's operation with no help
// from its lock (history.InOp on its fault-start): the harness stopped or
// killed the client a delay after it wrote an acquire or release request.
// From outside the lock nobody can see between which of its round trips
// the stop landed, so the history judges what can be seen:
//
//   - Inside: the request was still outstanding when the client stopped
//     (the harness had not read its reply; see history.InOp).
//   - Held: while the client was stopped (or once it was dead), another
//     client was refused the key, asked after the stop landed, and no
//     other lease may have held the key at any moment from the struck
//     request's write to that refusal's reply (a lease may hold from its
//     acquire's invocation until its ok or failed release replied, or a
//     TTL after its last acquire or renewal was last heard of, as the
//     liveness checker reads it). Only the struck lease can have held the
//     key all that while: its release had not taken effect yet, or its
//     acquire had.
//   - A strike hits when it landed Inside and Held, and, for a pause,
//     the client was resumed only after the struck lease's TTL had passed
//     (its last acquire or renewal invocation + TTL): the operation was in
//     flight across its lease's expiry. A dead client stays stopped.
//
// What the lock then did is the strike's outcome, not its staging:
//
//   - Late: a paused operation that hit completed ok: the release (or the
//     acquire) took effect after its lease had expired. A correct lock's
//     late release fails; a GET-compare-DEL release deletes whoever holds
//     the key by then.
//   - Stuck: after a killed operation that hit, another client was still
//     refused the key a TTL after the lease ran out, nobody else granted
//     it in between: a key left without expiry.
//
// The nemesis strikes fresh requests until one is Late or Stuck (or its
// bound); the run counts only if one of a step's strikes hit.
type Strike struct {
	Fault, ID, Key, Lease string
	Op                    history.F // the operation struck: acquire or release
	Kill                  bool
	Process               int
	// Sent is the struck operation's invocation; Started the fault-start's
	// invocation, Landed its completion (the client stopped, or dead and
	// reaped); Resumed the fault-end's invocation for a pause (never for a
	// kill).
	Sent, Started, Landed, Resumed int64
	// Expiry is when the struck lease ran out by the harness's clock.
	Expiry int64
	TTL    int64
	Inside bool
	Held   bool
	// TakenBefore: before the struck request was sent, the key was
	// already refused with no lease to explain it (stuck by an earlier
	// strike): nothing after can be credited to this one, which is never
	// Held.
	TakenBefore bool
	// HeldBy is the refusal that showed it: its process and invocation.
	HeldBy   int
	HeldAt   int64
	Late     bool
	Stuck    bool
	Granted  bool // another client was granted the key after the strike
	Outcome  history.Type
	Done     int64 // the struck operation's completion; 0 without one
	Delay    int64 // as sent
	Latency  int64
	Complete bool // the fault-end's completion said how it landed
}

// Hit reports a strike that staged what it was for (see Strike).
func (s Strike) Hit() bool {
	return s.Inside && s.Held && (s.Kill || s.Resumed >= s.Expiry)
}

// Name reads like "pause-in-release(process 4 in its release of p4.3 ...)".
func (s Strike) Name() string { return FaultWindow{Fault: s.Fault}.Name() }

// Strikes finds every strike of a history, in order, judged.
func Strikes(in *Input) []Strike {
	var out []Strike
	for i, p := range in.nemesis {
		inv := p.Invoke
		if inv.F != history.FaultStart || inv.InOp == nil || p.Outcome() != history.OK {
			continue
		}
		s := Strike{Fault: inv.Fault, ID: inv.FaultID, Key: inv.Key, Lease: inv.Lease, Op: inv.InOp.Op, Kill: inv.InOp.Kill,
			Started: inv.Time, Landed: p.Complete.Time, Resumed: never, Latency: inv.InOp.Latency, Sent: -1, Expiry: never}
		if p.Complete.InOp != nil {
			s.Delay = p.Complete.InOp.Delay
		}
		for _, q := range in.nemesis[i+1:] {
			if q.Invoke.F == history.FaultEnd && q.Invoke.FaultID == s.ID {
				if !s.Kill {
					s.Resumed = q.Invoke.Time
				}
				if q.Complete != nil && q.Complete.InOp != nil {
					s.Inside, s.Complete = q.Complete.InOp.Inside, true
				}
				break
			}
		}
		in.judge(&s)
		out = append(out, s)
	}
	return out
}

// judge reads what the lock operations say about s.
func (in *Input) judge(s *Strike) {
	struck := int32(-1)
	var last int64 = -1 // the lease's last acquire or renewal invocation
	for i := range in.locks {
		l := &in.locks[i]
		if l.lease != s.Lease || l.f != s.Op {
			continue
		}
		// A lease has one acquire and one release; of its renewals the
		// struck one is the holder's last sent before the strike.
		if s.Op == history.Renew && (l.via == "" || l.call > s.Started || l.call < s.Sent) {
			continue
		}
		if s.Sent < 0 || s.Op == history.Renew {
			s.Sent, s.Process, struck = l.call, int(l.process), l.client
			s.Outcome, s.TTL = l.outcome, firstOf(l.ttl, s.TTL)
			if l.completed() {
				s.Done = l.done
			} else {
				s.Outcome = ""
			}
		}
	}
	for i := range in.locks {
		l := &in.locks[i]
		if l.lease != s.Lease || (l.f != history.Acquire && l.f != history.Renew) || l.outcome == history.Fail {
			continue
		}
		if s.Op == history.Renew && l.call >= s.Sent {
			continue // a renewal struck runs out from what came before it
		}
		last, s.TTL = max(last, l.call), firstOf(s.TTL, l.ttl)
	}
	if s.Sent < 0 {
		return // the struck operation is not in the history
	}
	if last >= 0 {
		s.Expiry = expiry(last, s.TTL)
	}
	// held finds a refusal to another client asked in [from, to) that no
	// other lease can explain: none may have held the key at any moment
	// from the struck request's write to the refusal's reply.
	spans := in.leaseSpans(s.Key, s.Lease)
	held := func(from, to int64) (int, int64, bool) {
		for i := range in.locks {
			r := &in.locks[i]
			if r.f != history.Acquire || r.key != s.Key || r.client == struck || r.process < 0 || r.outcome != history.Fail ||
				!r.refused || !r.completed() || r.call < from || r.call >= to {
				continue
			}
			explained := false
			for _, sp := range spans {
				explained = explained || (sp.call < r.done && sp.end > s.Sent)
			}
			if !explained {
				return int(r.process), r.call, true
			}
		}
		return 0, 0, false
	}
	s.TakenBefore = in.takenBefore(s.Key, s.Sent)
	if !s.TakenBefore {
		s.HeldBy, s.HeldAt, s.Held = held(s.Landed, s.Resumed)
	}
	for i := range in.locks {
		a := &in.locks[i]
		if a.f == history.Acquire && a.key == s.Key && a.client != struck && a.outcome == history.OK && a.done > s.Landed {
			s.Granted = true
			break
		}
	}
	s.Late = !s.Kill && s.Hit() && s.Outcome == history.OK
	if s.Kill && s.Hit() {
		_, _, s.Stuck = held(expiry(s.Expiry, s.TTL), never)
	}
}

// takenBefore reports a refusal of key, since its last grant before t and
// answered by t, that no lease explains: the key was taken beyond the
// leases already (a key left stuck by an earlier strike), so nothing seen
// after t can be credited to a lease asked for at t.
func (in *Input) takenBefore(key string, t int64) bool {
	var granted int64
	for i := range in.locks {
		if a := &in.locks[i]; a.f == history.Acquire && a.key == key && a.outcome == history.OK && a.done <= t {
			granted = max(granted, a.done)
		}
	}
	spans := in.leaseSpans(key, "")
	for i := range in.locks {
		r := &in.locks[i]
		if r.f != history.Acquire || r.key != key || r.outcome != history.Fail || !r.refused || !r.completed() || r.call < granted || r.done > t {
			continue
		}
		explained := false
		for _, sp := range spans {
			explained = explained || (sp.call < r.done && sp.end > r.call)
		}
		if !explained {
			return true
		}
	}
	return false
}

// leaseSpan is when another client's lease of a key may have held it: from
// its acquire's invocation (call) to end.
type leaseSpan struct{ call, end int64 }

// leaseSpans finds, for every lease of key but the struck one whose
// acquire did not fail, when it may have held the key, as the
// liveness checker reads it: from its acquire's invocation until a TTL
// after its last acquire or renewal was last heard of (its reply, or the
// end of the history without one), or until its release replied, if that
// release was ok or failed (after it the lease surely held nothing).
func (in *Input) leaseSpans(key, struck string) map[string]leaseSpan {
	spans := map[string]leaseSpan{}
	released := map[string]int64{}
	for i := range in.locks {
		l := &in.locks[i]
		if l.key != key || l.lease == struck {
			continue
		}
		switch {
		case l.f == history.Release && l.completed() && l.outcome != history.Info:
			released[l.lease] = l.done
		case (l.f == history.Acquire || l.f == history.Renew) && l.outcome != history.Fail:
			heard := in.End
			if l.completed() {
				heard = l.done
			}
			end := expiry(heard, l.ttl)
			sp, seen := spans[l.lease]
			if !seen {
				sp.call = l.call
			}
			sp.call, sp.end = min(sp.call, l.call), max(sp.end, end)
			spans[l.lease] = sp
		}
	}
	for lease, done := range released {
		if sp, ok := spans[lease]; ok {
			sp.end = min(sp.end, done)
			spans[lease] = sp
		}
	}
	return spans
}

// strikeTroubles flags each series of strikes (one fault on one key)
// none of which hit: the run never staged what the fault is for.
func strikeTroubles(in *Input) []Anomaly {
	var out []Anomaly
	for _, sr := range strikeSeries(in) {
		k, ss, inside, held := sr.series, sr.strikes, sr.inside, sr.held
		if sr.hit || sr.oneStep() {
			continue
		}
		what := "paused across its lease's expiry"
		if ss[0].Kill {
			what = "killed"
		}
		out = append(out, Anomaly{Kind: KindPrecondition, At: ss[0].Landed, Key: k.key,
			Text: fmt.Sprintf("no strike of %s on key %q landed inside its %s while the key was seen held and %s: %s struck, %d inside (the reply outstanding), %d of them with the key seen held after the stop",
				k.fault, k.key, ss[0].Op, what, Plural(len(ss), "strike"), inside, held)})
	}
	return out
}

// seriesOf is one series of strikes (one fault on one key) and its counts.
type seriesOf struct {
	series       struct{ fault, key string }
	strikes      []Strike
	inside, held int
	hit          bool
}

// strikeSeries groups a history's strikes by series, in order.
func strikeSeries(in *Input) []seriesOf {
	type series = struct{ fault, key string }
	var order []series
	all := map[series][]Strike{}
	for _, s := range Strikes(in) {
		k := series{s.Fault, s.Key}
		if _, seen := all[k]; !seen {
			order = append(order, k)
		}
		all[k] = append(all[k], s)
	}
	var out []seriesOf
	for _, k := range order {
		sr := seriesOf{series: k, strikes: all[k]}
		for _, s := range sr.strikes {
			sr.hit = sr.hit || s.Hit()
			if s.Inside {
				sr.inside++
				if s.Held {
					sr.held++
				}
			}
		}
		out = append(out, sr)
	}
	return out
}

// MinInsideForOneStep is how many of a series' stops must land inside
// the call, with the key never seen held after one, before the judge
// concludes that the call is one step on the server.
const MinInsideForOneStep = 5

// oneStep: the series' stops landed inside the call MinInsideForOneStep
// times or more and the key was never seen held after one: the call took
// effect whole before each stop (one request the server runs as one step,
// a script), so no stop can land between its check and its write, and the
// failure the series stages cannot arise for this lock. Kills are judged
// by what they left (stuck), not by this.
func (sr seriesOf) oneStep() bool {
	return !sr.hit && len(sr.strikes) > 0 && !sr.strikes[0].Kill && sr.inside >= MinInsideForOneStep && sr.held == 0
}

// notApplicable says why the failure a run stages cannot arise for its
// lock, from the evidence ("" when it can): a series of stops inside a
// call that is one step, a grant aimed under replies held back past the
// lease that the lock never handed back (late_grants.go), or a grant the
// lock withheld for as long as the run's faults lasted
// (withheld_grants.go). The index
// is the history index of the missed step the reason accounts for, -1
// for none.
func notApplicable(in *Input) (string, int) {
	for _, sr := range strikeSeries(in) {
		if sr.oneStep() {
			return fmt.Sprintf("the lock's %s is one step: %d of %s of %s landed inside it (the reply outstanding), and after none was the key %q seen held, so no stop can land between its check and its write",
				sr.strikes[0].Op, sr.inside, Plural(len(sr.strikes), "strike"), sr.series.fault, sr.series.key), -1
		}
	}
	if why, i := lateGrantsDropped(in); why != "" {
		return why, i
	}
	return grantsWithheld(in)
}

// StrikesText sums up a history's strikes in a line, "" without any.
func StrikesText(ss []Strike) string {
	if len(ss) == 0 {
		return ""
	}
	var inside, held, hit, late, stuck int
	for _, s := range ss {
		inside += b2i(s.Inside)
		held += b2i(s.Inside && s.Held)
		hit += b2i(s.Hit())
		late += b2i(s.Late)
		stuck += b2i(s.Stuck)
	}
	parts := []string{Plural(len(ss), "strike"), fmt.Sprintf("%d inside", inside), fmt.Sprintf("%d held", held), fmt.Sprintf("%d hit", hit)}
	if late > 0 {
		parts = append(parts, fmt.Sprintf("%d late", late))
	}
	if stuck > 0 {
		parts = append(parts, fmt.Sprintf("%d stuck", stuck))
	}
	return strings.Join(parts, ", ")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
