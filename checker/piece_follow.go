package checker

import (
	"slices"
	"sort"
)

// Most pieces of a key (legalPiece) are legal in the first order
// porcupine tries: the search walks its time-ordered events, places each
// operation it can, and never backs up. Setting up that search (boxed
// operations, linked events, bitsets, a cache of visited states, a
// goroutine) cost more than the steps. followPorcupine takes the same
// walk on plain slices: the same events in the same order (porcupine's
// own sort of them), the same steps of the same power-set model, the
// same budget. Where the walk would back up, run out of events or pass
// the budget, it gives up and the caller runs porcupine, so a piece's
// verdict, its states and its step count are porcupine's in every case
// (piece_follow_test.go compares the two).

// followEvent is one of a piece's events: an operation's call or return.
type followEvent struct {
	ret  bool // porcupine's returnEntry; calls sort before returns at one time
	id   int
	time int64
}

// followEvents orders events as porcupine's makeEntries does. sort.Sort
// is not stable, but it is deterministic: the same Less on the same
// values in the same starting order gives porcupine's order.
type followEvents []followEvent

func (a followEvents) Len() int      { return len(a) }
func (a followEvents) Swap(i, j int) { a[i], a[j] = a[j], a[i] }
func (a followEvents) Less(i, j int) bool {
	if a[i].time != a[j].time {
		return a[i].time < a[j].time
	}
	return !a[i].ret && a[j].ret
}

var (
	followEventScratch scratchSlice[followEvent]
	intScratch         scratchSlice[int]
)

// followPorcupine walks piece from the states init as porcupine's first
// path would, each step charged as counted charges it (one per state),
// and reports the states its order leaves the key in and the steps it
// took, or false when porcupine must decide: the walk would back up,
// or its steps would pass limit (none when 0).
func followPorcupine(piece []*lockOp, init []any, reentrant bool, limit int64) (states []any, steps int64, ok bool) {
	n := len(piece)
	events := followEvents(followEventScratch.get(2 * n))
	defer followEventScratch.put(events)
	for i, l := range piece {
		events = append(events, followEvent{id: i, time: l.call}, followEvent{ret: true, id: i, time: l.output().Return})
	}
	sort.Sort(events)
	// A doubly linked list of the events not yet placed, as porcupine's:
	// index 0 is its head, event i is node i+1.
	next, prev, retNode := intScratch.get(2*n + 2)[:2*n+2], intScratch.get(2*n + 2)[:2*n+2], intScratch.get(n)[:n]
	defer intScratch.put(next)
	defer intScratch.put(prev)
	defer intScratch.put(retNode)
	for i := range events {
		next[i], prev[i+1] = i+1, i
		if events[i].ret {
			retNode[events[i].id] = i + 1
		}
	}
	next[2*n] = -1
	unlink := func(i int) {
		next[prev[i]] = next[i]
		if next[i] >= 0 {
			prev[next[i]] = prev[i]
		}
	}
	cur := make([]leaseState, 0, len(init))
	for _, s := range init {
		cur = mergeState(cur, s.(leaseState))
	}
	var buf, merged []leaseState
	for e := next[0]; next[0] >= 0; {
		ev := events[e-1]
		if ev.ret {
			return nil, 0, false // porcupine backs up, or finds the piece illegal
		}
		steps += int64(len(cur))
		if limit > 0 && steps > limit {
			return nil, 0, false
		}
		l := piece[ev.id]
		in, out := l.stepInput(reentrant), l.output()
		buf = buf[:0]
		for _, s := range cur {
			buf = stepLeaseInto(buf, s, in, out)
		}
		if len(buf) == 0 {
			e = next[e]
			continue
		}
		merged = merged[:0]
		for _, s := range buf {
			merged = mergeState(merged, s)
		}
		cur, merged = merged, cur
		unlink(e)
		unlink(retNode[ev.id])
		e = next[0]
	}
	states = make([]any, len(cur))
	for i, s := range cur {
		states[i] = s
	}
	return states, steps, true
}

// mergeState adds s to states unless it is there: porcupine's merge of a
// power-set model's states keeps each once, in the order first seen
// (leaseState compares with ==, as porcupine's default Equal does).
func mergeState(states []leaseState, s leaseState) []leaseState {
	if slices.Contains(states, s) {
		return states
	}
	return append(states, s)
}
