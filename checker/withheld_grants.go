package checker

import (
	"fmt"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
)

// grantsWithheld says, from the evidence, why a step that waited for a
// client's grant missed for a reason of the lock's, not of the run's: the
// faults the run had struck (a cut of the client from some nodes, say)
// were in effect the whole time the step waited, acquires of the key were
// asking nearly all of that time, nobody held the key, and the lock granted
// none of them. A library that waits on every node its faults silence for
// longer than its lease (redsync's tries at go-redis's default timeouts
// over a hanging minority of masters) grants nothing while they last, so
// a grant made under them, which the step stages its failure on, does not
// come from the lock as it is configured. It returns the reason ("" when
// the evidence does not show it) and the history index of the missed
// step's invocation.
//
// The evidence must be whole: a key some lease held, a grant that came, a
// client stopped or killed while it asked, acquires that left more than a
// tenth of the wait unasked, or a wait shorter than a lease (a lock that
// grants at all grants a free key well within one), and the step stays a
// missed staging.
func grantsWithheld(in *Input) (string, int) {
	for _, p := range in.nemesis {
		inv := p.Invoke
		if inv.F != history.FaultMissed || inv.Key == "" {
			continue
		}
		missed := inv.Time
		if p.Complete != nil {
			missed = p.Complete.Time
		}
		if why := withholds(in, inv.Key, missed); why != "" {
			return why, inv.Index
		}
	}
	return "", -1
}

// healMargin is how long before a step gives up a fault may heal and
// still count as in effect: the fault phase's end heals every fault and
// ends every waiting step, in that order.
const healMargin = int64(250 * time.Millisecond)

// withholds is grantsWithheld's reason for key, whose grant a step waited
// for until missed, "" when the evidence does not show it.
func withholds(in *Input, key string, missed int64) string {
	// The faults in effect when the step gave up, struck before it and
	// healed no earlier (the fault phase's heal comes as the step gives
	// up): the wait is judged from the last of their strikes.
	var inEffect []FaultWindow
	var since int64
	for _, w := range in.Faults {
		if w.Struck == 0 || w.Struck >= missed || w.End+healMargin < missed || w.Effects.Instant || w.Effects.Stops || w.Effects.Kills {
			continue
		}
		inEffect = append(inEffect, w)
		since = max(since, w.Struck)
	}
	if len(inEffect) == 0 {
		return ""
	}
	// A client stopped or killed while the step waited asked nothing the
	// lock could answer.
	for _, w := range in.Faults {
		if w.OnClients() && (w.Effects.Stops || w.Effects.Kills) && w.Struck < missed && (w.End == 0 || w.End > since) {
			return ""
		}
	}
	var asked, ttl int64
	var spans int
	pending := false // the last acquire was still asking as the step gave up
	cursor := since
	for i := range in.locks {
		l := &in.locks[i]
		if l.f != history.Acquire || l.key != key || l.process < 0 || l.start() >= missed {
			continue
		}
		end := l.done
		if end == noCompletion || end > missed {
			end = missed
		}
		if end <= since {
			continue
		}
		if l.outcome == history.OK && l.done <= missed {
			return "" // a grant came under the faults
		}
		pending = l.done == noCompletion || l.done > missed
		ttl = max(ttl, l.ttlLongest())
		spans++
		// The acquires' union over the wait, in the order they began (one
		// client asks at a time for a key the step keeps for it).
		from := max(l.start(), cursor)
		if end > from {
			asked += end - from
			cursor = end
		}
	}
	wait := missed - since
	if spans == 0 || ttl <= 0 || wait < ttl || asked*10 < wait*9 {
		return ""
	}
	for _, h := range in.Holds[key] {
		if h.AcquiredAt < missed && h.Until > since {
			return ""
		}
	}
	var names []string
	for _, w := range inEffect {
		names = append(names, w.Name())
	}
	still := ""
	if pending {
		still = " (the last still without an answer when the faults healed)"
	}
	return fmt.Sprintf("the lock granted nothing while %s %s in effect: %s of %q asked for it over %s of the %s from %s to %s, with nobody holding the key, and brought no grant%s, so a grant made under them, on which the run stages its failure, does not come from this lock as it is configured",
		strings.Join(names, " and "), map[bool]string{true: "was", false: "were"}[len(names) == 1], Plural(spans, "acquire"), key,
		time.Duration(asked).Round(time.Millisecond), time.Duration(wait).Round(time.Millisecond), at(since), at(missed), still)
}
