package checker

import (
	"fmt"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
)

// lateGrantsDropped says, from the evidence, why a step that waited for a
// client's grant under a fault that holds back every reply to that client
// longer than the lock's lease missed for a reason of the lock's, not of
// the run's: the client asked for the key while nobody held it, and the
// lock handed back no grant before the heal. Every such grant's reply
// reaches the client after its lease ran out on the server, so a lock
// that judges a grant's validity on arrival (rueidislock drops it and asks
// again) or gives up on the call first never hands one back, and the
// failure the step stages, a holder working under a lease that had already
// expired, cannot arise for it. It returns the reason ("" when the
// evidence does not show it) and the history index of the missed step's
// invocation.
//
// Only the aimed client may ask for the key while the step waits (the
// workload's gate admits no other), so every acquire of it asked under the
// fault is that client's.
func lateGrantsDropped(in *Input) (string, int) {
	for _, p := range in.nemesis {
		inv := p.Invoke
		if inv.F != history.FaultMissed || inv.Key == "" || inv.FaultID == "" {
			continue
		}
		for _, w := range in.Faults {
			if w.ID != inv.FaultID || !w.Effects.DelaysReplies || w.By <= 0 || w.Struck == 0 {
				continue
			}
			if why := dropsLateGrants(in, w, inv.Key); why != "" {
				return why, inv.Index
			}
		}
	}
	return "", -1
}

// dropsLateGrants is lateGrantsDropped's reason for key under w, "" when
// the acquires asked under w do not show it: none asked, one granted
// before the heal, a lease time unknown or not shorter than the delay, or
// another lease held the key while they asked.
func dropsLateGrants(in *Input, w FaultWindow, key string) string {
	var asked, ttl, first int64
	for i := range in.locks {
		l := &in.locks[i]
		if l.f != history.Acquire || l.key != key || l.process < 0 || l.start() < w.Struck || l.start() >= w.End {
			continue
		}
		if l.outcome == history.OK && l.done <= w.End {
			return "" // a grant came under the fault
		}
		if l.ttlLongest() <= 0 {
			return ""
		}
		if asked == 0 {
			first = l.start()
		}
		asked++
		ttl = max(ttl, l.ttlLongest())
	}
	if asked == 0 || w.By <= ttl {
		return ""
	}
	for _, h := range in.Holds[key] {
		if h.AcquiredAt < w.End && h.Until > first {
			return ""
		}
	}
	return fmt.Sprintf("the lock hands back no grant whose reply came after its lease ran out: %s held back every reply to the client %s, past the lease of %s, and its %s of %q from %s to the heal at %s, with nobody holding the key, brought no grant, so a holder working under a lease that had expired before its grant arrived cannot arise for this lock",
		w.Name(), time.Duration(w.By), time.Duration(ttl), Plural(asked, "acquire"), key, at(first), at(w.End))
}
