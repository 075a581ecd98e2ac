package checker

import (
	"fmt"

	"github.com/deadbolt-lab/deadbolt/history"
)

// KindClientClock is an event a client stamped with its own clock at a
// time that cannot be: a renewal of a lease before the harness even sent
// the lease's acquire. Every process on the host reads one
// CLOCK_MONOTONIC, so such a stamp says the client's clock (or its
// driver's arithmetic) is wrong: its stamped events cannot be placed, and
// the run is unknown rather than a lock violation.
const KindClientClock = "client-clock"

var askedScratch scratchMap[string, int64]

// clientClocks drops the renewals stamped before their lease's acquire was
// sent, and reports each as a client-clock anomaly, with the history index
// of each dropped renewal. The others are kept.
func clientClocks(locks []lockOp) ([]lockOp, []Anomaly, []int32) {
	asked := askedScratch.get(len(locks) / 2) // sized: growing it cost more than filling it
	defer askedScratch.put(asked)
	for i := range locks {
		if l := &locks[i]; l.f == history.Acquire {
			if _, seen := asked[l.lease]; !seen {
				asked[l.lease] = l.call
			}
		}
	}
	var out []Anomaly
	var dropped []int32
	early := func(l *lockOp) (int64, bool) {
		if l.f != history.Renew {
			return 0, false
		}
		sent, ok := asked[l.lease]
		return sent, ok && l.call < sent
	}
	first := 0 // the first renewal dropped: before it, every operation is kept in place
	for first < len(locks) {
		if _, ok := early(&locks[first]); ok {
			break
		}
		first++
	}
	kept := locks[:first]
	for i := first; i < len(locks); i++ {
		l := &locks[i]
		if sent, ok := early(l); ok {
			out = append(out, Anomaly{Kind: KindClientClock, At: l.call, Key: l.key, Leases: []string{l.lease},
				Text: fmt.Sprintf("process %d stamped a renewal of lease %s at %s, before the harness sent that lease's acquire at %s: "+
					"the client's clock disagrees with the host's, so its stamped events cannot be placed", l.process, l.lease, at(l.call), at(sent))})
			dropped = append(dropped, l.invIndex)
			continue
		}
		kept = append(kept, *l)
	}
	return kept, out, dropped
}
