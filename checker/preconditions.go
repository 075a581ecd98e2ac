package checker

import (
	"fmt"

	"github.com/deadbolt-lab/deadbolt/history"
)

// A fault aimed at a grant (a step that waited for a client's acquire, or
// struck the holder of a key) names the grant's lease on its fault-start.
// The run staged what it set out to only if, by the harness's own windows:
//
//   - the lease was held from the fault-start's invocation to its ok: a
//     pause that lands after its victim's lease ran out, or a restart that
//     finishes after the holder let go, tests nothing. A lease the lock
//     told its holder it lost while the fault was striking was held when
//     it struck and lost to it: that is the fault striking, not a miss
//     (closing the connections ends a watchdog's renewal in flight);
//   - the lease was asked for after every other fault in effect at the
//     strike had struck (its fault-start was ok): restart-redlock's client A
//     must hold a lease taken while its links to redis-4 and redis-5 were
//     cut, or it holds all five nodes and losing redis-3 costs it nothing.
//
// A heal aimed at a grant (nemesis.UntilHandoff) names that grant's lease on its
// fault-end, which must be held while the heal is made.
//
// And no client asks for a lock before the history's mark of the fault
// phase: the faults that must be in effect from the first acquire (a
// partition for the whole run) strike before it.
//
// A fault struck inside a client's operation (history.InOp) is judged by
// its own rule instead: one strike of each series must hit (strikes.go).
//
// preconditionTroubles returns a precondition anomaly for each fault that
// broke one of them. Faults that did not start ok are faultTroubles'.
func preconditionTroubles(in *Input) []Anomaly {
	out := append(earlyClients(in), strikeTroubles(in)...)
	started := map[string]int64{} // fault id -> ok of its fault-start
	for _, p := range in.nemesis {
		if p.Invoke.F == history.FaultStart && p.Outcome() == history.OK && p.Invoke.FaultID != "" {
			started[p.Invoke.FaultID] = p.Complete.Time
		}
	}
	asked := map[string]int64{} // lease -> invocation of its acquire
	for i := range in.locks {
		if l := &in.locks[i]; l.f == history.Acquire && l.lease != "" {
			if _, dup := asked[l.lease]; !dup {
				asked[l.lease] = l.call
			}
		}
	}
	for _, p := range in.nemesis {
		inv := p.Invoke
		if inv.F == history.FaultEnd && inv.Lease != "" && p.Outcome() == history.OK {
			// A heal aimed at a grant (a pause that ends at the next
			// holder's grant): that lease held while the heal was made.
			if from, to := inv.Time, p.Complete.Time; !heldThrough(in.LeaseHolds(inv.Lease), from, to) {
				out = append(out, Anomaly{Kind: KindPrecondition, At: from, Key: inv.Key, Leases: []string{inv.Lease},
					Text: fmt.Sprintf("the heal of %s was aimed at lease %s on key %q, which was not held from %s to %s while it healed (%s)",
						faultName(inv), inv.Lease, inv.Key, at(from), at(to), holdsText(in.LeaseHolds(inv.Lease)))})
			}
			continue
		}
		if inv.F != history.FaultStart || inv.Lease == "" || inv.InOp != nil || p.Outcome() != history.OK {
			continue
		}
		from, to := inv.Time, p.Complete.Time
		fault := faultName(inv)
		if !heldThrough(in.LeaseHolds(inv.Lease), from, to) && !lostToStrike(in, inv.Lease, from, to) {
			out = append(out, Anomaly{Kind: KindPrecondition, At: from, Key: inv.Key, Leases: []string{inv.Lease},
				Text: fmt.Sprintf("%s was aimed at lease %s on key %q, which was not held from %s to %s while the fault struck (%s)",
					fault, inv.Lease, inv.Key, at(from), at(to), holdsText(in.LeaseHolds(inv.Lease)))})
			continue
		}
		call, ok := asked[inv.Lease]
		if !ok {
			continue // held, so acquired: never reached
		}
		for _, w := range in.Faults {
			if w.ID == inv.FaultID || w.Start >= from || (w.Healed && w.End <= from) {
				continue // not in effect when this fault struck
			}
			if okAt, struck := started[w.ID]; !struck || okAt > call {
				out = append(out, Anomaly{Kind: KindPrecondition, At: from, Key: inv.Key, Leases: []string{inv.Lease},
					Text: fmt.Sprintf("%s was aimed at lease %s on key %q, asked for at %s, before %s (in effect at the strike) had struck",
						fault, inv.Lease, inv.Key, at(call), w.Name())})
			}
		}
	}
	return out
}

// earlyClients flags the first lock operation a client invoked before the
// fault phase's mark, if any.
func earlyClients(in *Input) []Anomaly {
	for _, p := range in.Phases {
		if p.Phase != history.PhaseFaults {
			continue
		}
		for i := range in.locks {
			if l := &in.locks[i]; l.process >= 0 && l.call < p.Start {
				return []Anomaly{{Kind: KindPrecondition, At: l.call, Key: l.key, Leases: []string{l.lease},
					Text: fmt.Sprintf("process %d sent its %s of key %q at %s, before the workload was let begin at %s, "+
						"when the faults that must be in effect from the first acquire had struck", l.process, l.f, l.key, at(l.call), at(p.Start))}}
			}
		}
		break
	}
	return nil
}

// heldThrough reports a window of hs that covers [from, to].
func heldThrough(hs []Hold, from, to int64) bool {
	for _, h := range hs {
		if h.AcquiredAt <= from && to < h.Until {
			return true
		}
	}
	return false
}

// lostToStrike reports that lease was held at from and that its window
// ended, by [from, to], at a loss the lock told its holder of: the strike
// took it.
func lostToStrike(in *Input, lease string, from, to int64) bool {
	for _, h := range in.LeaseHolds(lease) {
		if h.AcquiredAt > from || h.Until <= from || h.Until > to {
			continue
		}
		for i := range in.locks {
			if l := &in.locks[i]; l.f == history.Lost && l.lease == lease && l.outcome == history.OK && l.call == h.Until {
				return true
			}
		}
	}
	return false
}

func holdsText(hs []Hold) string {
	if len(hs) == 0 {
		return "it was never held"
	}
	s := "held"
	for i, h := range hs {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" from %s to %s", at(h.AcquiredAt), at(h.Until))
	}
	return s
}
