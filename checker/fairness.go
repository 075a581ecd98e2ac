package checker

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/deadbolt-lab/deadbolt/history"
)

func init() {
	RegisterScoped("fairness", "a waiter that stood in a fair lock's queue before another acquire was sent is granted first, unless it left the line (its acquire failed)", LockService,
		func(Options) Checker { return fairness{} })
}

// fairness judges a lock that keeps its waiters in line. The lock says
// when an acquire first stood in its queue (history.Op.Queued, stamped by
// the client after the reply that put it there); everything else is the
// harness's own record. Waiter A was in line before acquire B was even
// sent when A.Queued < B's invocation. If B is then granted while A still
// waits (A's grant arrives after B's), B jumped the queue.
//
// Only a waiter whose acquire succeeded is judged: one that failed or
// ended unknown may have left the line (its wait ran out, its place
// lapsed) at any moment, and a fair lock owes it nothing after that. And
// only one whose lease arrived within its TTL: A's grant then kept the key
// from its grant until its ok, so had the server granted A before B, it
// granted B over A's live lease, a double hold in disguise; either way
// the lock broke a promise. A grant that arrived after its TTL could have
// preceded B's by more than a TTL, so it cannot be ordered and is not
// judged.
//
// A lock that never says it queued anything is not judged. One that
// queued waiters but never gave the judge a pair (a waiter in line before
// another acquire was sent and still waiting then, both granted) is
// unknown: nothing showed whether the order was kept.
type fairness struct{}

// QueueJump is one grant that passed waiters already in line.
type QueueJump struct {
	Key string `json:"key"`
	// Lease was granted (Invoked, Granted) while Waiter, in line since
	// Queued < Invoked, still waited until WaiterGranted.
	Lease         string `json:"lease"`
	Process       int    `json:"process"`
	Invoked       int64  `json:"invoked"`
	Granted       int64  `json:"granted"`
	Waiter        string `json:"waiter"`
	WaiterProcess int    `json:"waiter_process"`
	Queued        int64  `json:"queued"`
	WaiterGranted int64  `json:"waiter_granted"`
	// Passed is how many waiters in line before Invoked were granted after.
	Passed int `json:"passed"`
}

func (j QueueJump) String() string {
	s := fmt.Sprintf("process %d's lease %s of key %q was granted (acquire sent at %s, ok at %s) while process %d's lease %s, in line since %s, still waited (granted only at %s)",
		j.Process, j.Lease, j.Key, at(j.Invoked), at(j.Granted), j.WaiterProcess, j.Waiter, at(j.Queued), at(j.WaiterGranted))
	if j.Passed > 1 {
		s += fmt.Sprintf("; it passed %d waiters in all", j.Passed)
	}
	return s
}

func (c fairness) Check(in *Input) Result { return checkWhole(c, in) }

// fairnessPart is a key's or window's queue jumps and counts. A waiter and
// the acquire sent while it waited never span a cut (window.go).
type fairnessPart struct {
	jumps         []QueueJump
	queued        int
	pairs, passed int64
}

func (fairness) Part(in *Input, _ PartAt) (any, any) {
	var p fairnessPart
	p.jumps, p.queued, p.pairs, p.passed = queueJumpsOf(in)
	return p, nil
}

func (fairness) Merge(_ *Input, parts []any) Result {
	var all fairnessPart
	for _, p := range parts {
		p := p.(fairnessPart)
		all.jumps = append(all.jumps, p.jumps...)
		all.queued, all.pairs, all.passed = all.queued+p.queued, all.pairs+p.pairs, all.passed+p.passed
	}
	return fairnessResult(all.jumps, all.queued, all.pairs, all.passed)
}

// queueJumpsOf judges every key's grants: the jumps found, key by key in
// key order, the acquires that stood in line, the pairs judged and the
// waiters passed.
func queueJumpsOf(in *Input) (jumps []QueueJump, queued int, pairs, passed int64) {
	expired := map[string]bool{}
	for _, l := range in.ExpiredOnArrival {
		expired[l] = true
	}
	for i := range in.locks {
		if l := &in.locks[i]; l.f == history.Acquire && l.process >= 0 && l.queued > 0 {
			queued++
		}
	}
	if queued == 0 {
		return nil, 0, 0, 0
	}
	byKey := map[string][]*lockOp{}
	for i := range in.locks {
		// A holder's re-entry waits for nobody: it passes no one.
		if l := &in.locks[i]; l.f == history.Acquire && l.process >= 0 && !in.Reentries[l.lease] {
			byKey[l.key] = append(byKey[l.key], l)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(byKey)) {
		j, p, n := queueJumps(key, byKey[key], expired)
		jumps = append(jumps, j...)
		pairs += p
		passed += n
	}
	return jumps, queued, pairs, passed
}

// fairnessResult is the verdict on the queue jumps found, key by key in
// key order, among queued acquires and pairs judged.
func fairnessResult(jumps []QueueJump, queued int, pairs, passed int64) Result {
	r := newResult("fairness")
	r.Metrics["queued"] = int64(queued)
	if queued == 0 {
		r.Applicable, r.Aside = false, true
		r.Reason = "no queue: the lock never said an acquire stood in line, so there is no order to keep."
		return r
	}
	sort.SliceStable(jumps, func(i, j int) bool { return jumps[i].Granted < jumps[j].Granted })
	r.Details = jumps
	r.Metrics["judged_pairs"] = pairs
	r.Metrics["queue_jumps"] = int64(len(jumps))
	r.Metrics["waiters_passed"] = passed
	for _, j := range jumps {
		r.Anomalies = append(r.Anomalies, Anomaly{Kind: KindQueueJump, At: j.Granted, Key: j.Key, Leases: []string{j.Lease, j.Waiter}, Text: j.String()})
	}
	switch {
	case len(jumps) > 0:
		r.Verdict = Invalid
		r.Reason = fmt.Sprintf("the lock did not grant in queue order: %s passed %s already in line (the first: %s).",
			Plural(len(jumps), "grant"), Plural(int(passed), "waiter"), jumps[0])
	case pairs == 0:
		r.Verdict = Unknown
		r.Reason = fmt.Sprintf("nothing to judge: %s stood in line, but none was granted while another acquire sent after it was, so no order was shown kept or broken.",
			Plural(queued, "acquire"))
	default:
		r.Reason = fmt.Sprintf("every grant kept the queue's order: in %s of a waiter in line and an acquire sent while it waited, the waiter was granted first.",
			Plural(int(pairs), "pair"))
	}
	return r
}

// queueJumps judges one key's acquires: for each grant B, the waiters A
// judged (see fairness) that were in line before B was sent, and which of
// them were granted after B. It returns the jumps, the pairs judged and
// the waiters passed.
func queueJumps(key string, acqs []*lockOp, expired map[string]bool) (jumps []QueueJump, pairs, passed int64) {
	var waiters, grants []*lockOp
	for _, l := range acqs {
		if l.outcome != history.OK {
			continue
		}
		grants = append(grants, l)
		if l.queued > 0 && !expired[l.lease] {
			waiters = append(waiters, l)
		}
	}
	if len(waiters) == 0 {
		return nil, 0, 0
	}
	slices.SortFunc(waiters, func(a, b *lockOp) int { return cmp.Compare(a.queued, b.queued) })
	slices.SortFunc(grants, func(a, b *lockOp) int { return cmp.Compare(a.call, b.call) })
	// Waiters enter, in order of queueing, once they were in line before
	// the grant's acquire was sent; a Fenwick tree over their grant times
	// counts those still waiting when it was sent, and those granted after
	// it.
	dones := make([]int64, len(waiters))
	for i, w := range waiters {
		dones[i] = w.done
	}
	slices.Sort(dones)
	tree := make([]int, len(dones)+1)
	add := func(i int) {
		for i++; i < len(tree); i += i & -i {
			tree[i]++
		}
	}
	countUpTo := func(i int) (n int) { // entered waiters among dones[:i]
		for ; i > 0; i -= i & -i {
			n += tree[i]
		}
		return n
	}
	var last *lockOp // the entered waiter granted last
	entered := 0
	for _, b := range grants {
		for entered < len(waiters) && waiters[entered].queued < b.call {
			w := waiters[entered]
			rank, _ := slices.BinarySearch(dones, w.done)
			add(rank)
			if last == nil || w.done > last.done {
				last = w
			}
			entered++
		}
		if entered == 0 {
			continue
		}
		// Waiters still in line when b was sent; those granted after b
		// were passed.
		atCall, _ := slices.BinarySearch(dones, b.call+1)
		atDone, _ := slices.BinarySearch(dones, b.done+1)
		after := entered - countUpTo(atDone)
		pairs += int64(entered - countUpTo(atCall))
		passed += int64(after)
		if after > 0 {
			jumps = append(jumps, QueueJump{Key: key, Lease: b.lease, Process: int(b.process), Invoked: b.call, Granted: b.done,
				Waiter: last.lease, WaiterProcess: int(last.process), Queued: last.queued, WaiterGranted: last.done, Passed: after})
		}
	}
	return jumps, pairs, passed
}
