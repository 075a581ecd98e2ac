package checker

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/deadbolt-lab/deadbolt/history"
)

func init() {
	Register("fencing", "fencing tokens that grow with every grant, and a resource that refuses every access older than one it has seen",
		func(Options) Checker { return fencing{} })
}

// fencing judges Kleppmann's remedy, end to end. It is invalid when
//
//   - tokens go backwards: a lease whose acquire began after another's
//     completed carries a token no higher, so the resource cannot tell
//     the stale holder;
//   - tokens do not follow the holds: a lease whose holding window (the
//     harness's) closed before another's opened carries a token no lower
//     (a grant that came after its own lease ran out, its token drawn
//     after the next holder's), so the resource takes the stale holder's
//     writes and refuses the rightful one's; or
//   - a stale write slipped past the fence: the resource took a write after
//     it had acknowledged an access with a higher token on the same key.
//
// A write under a superseded lease that the resource took before the newer
// holder touched it is no failure: the fence cannot know yet, and the newer
// holder then reads what it wrote: it is only counted, as are the stale
// accesses the resource rejected. What the data lost is the lost-updates
// checker's to say. A lock without tokens is reported as
// unfenced, never as fenced.
type fencing struct{}

// fenceGrant is an ok acquire as fencing sees it.
type fenceGrant struct {
	lease, key string
	inv, ok    int64
	fence      int64
	ttl        int64
}

// access is an ok resource operation under a lease, with the token it carried.
type access struct {
	op    history.Operation
	fence int64
}

func (fencing) Check(in *Input) Result {
	r := newResult("fencing")
	grants := map[string][]fenceGrant{} // key -> ok acquires
	leases := map[string]fenceGrant{}   // lease -> its grant
	tokens := 0
	for _, p := range in.Pairs {
		inv := p.Invoke
		if inv.F != history.Acquire || p.Outcome() != history.OK {
			continue
		}
		g := fenceGrant{lease: inv.Lease, key: inv.Key, inv: inv.Time, ok: p.Complete.Time, fence: firstOf(p.Complete.Fence, inv.Fence), ttl: inv.TTL}
		if g.fence != 0 {
			tokens++
		}
		grants[inv.Key] = append(grants[inv.Key], g)
		leases[inv.Lease] = g
	}
	if tokens == 0 {
		r.Applicable, r.Damage = false, "no fencing"
		r.Reason = "no fencing: the lock hands out no fencing tokens, so the resource could not reject a stale write."
		return r
	}
	for key, gs := range grants {
		r.Anomalies = append(r.Anomalies, backwards(key, gs)...)
	}
	backward := len(r.Anomalies)
	holds := maps.Clone(in.Holds)
	for _, lease := range in.ExpiredOnArrival {
		// Granted after its lease ran out: it held nothing, and its
		// window closed at inv+TTL, before any hold that opened later.
		if g, ok := leases[lease]; ok && g.ttl > 0 {
			holds[g.key] = append(slices.Clone(holds[g.key]), Hold{Lease: lease, Fence: g.fence, AcquiredAt: g.inv + g.ttl, Until: g.inv + g.ttl})
		}
	}
	for key, hs := range holds {
		r.Anomalies = append(r.Anomalies, holdsOutOfOrder(key, hs, leases)...)
	}
	disordered := len(r.Anomalies) - backward

	var rejectedWrites, rejectedReads int64
	accesses := map[string][]access{} // key -> ok client reads and writes
	for _, p := range in.Pairs {
		inv := p.Invoke
		if inv.Process < 0 || (inv.F != history.Write && inv.F != history.Read) {
			continue
		}
		switch p.Outcome() {
		case history.Fail:
			if inv.F == history.Write {
				rejectedWrites++
			} else {
				rejectedReads++
			}
		case history.OK:
			accesses[inv.Key] = append(accesses[inv.Key], access{p, firstOf(inv.Fence, leases[inv.Lease].fence)})
		}
	}
	var superseded int64
	stale := 0
	for key, as := range accesses {
		superseded += supersededWrites(grants[key], leases, as)
		found := slippedPast(key, as)
		stale += len(found)
		r.Anomalies = append(r.Anomalies, found...)
	}
	sortAnomalies(r.Anomalies)
	r.Metrics["stale_writes_rejected"] = rejectedWrites
	r.Metrics["stale_reads_rejected"] = rejectedReads
	r.Metrics["stale_writes_accepted"] = int64(stale)
	r.Metrics["superseded_writes_accepted"] = superseded
	r.Metrics["fence_backwards"] = int64(backward)
	r.Metrics["fence_out_of_order"] = int64(disordered)
	switch {
	case backward > 0 || disordered > 0 || stale > 0:
		r.Verdict = Invalid
		var what []string
		if backward > 0 {
			what = append(what, fmt.Sprintf("tokens went backwards %s", Plural(backward, "time")))
		}
		if disordered > 0 {
			what = append(what, fmt.Sprintf("%s carried a token no lower than a later holder's", Plural(disordered, "earlier hold")))
		}
		if stale > 0 {
			what = append(what, fmt.Sprintf("the resource took %s after it had seen a newer token", Plural(stale, "stale write")))
		}
		r.Reason = fmt.Sprintf("fencing failed: %s, so it cannot protect the resource.", strings.Join(what, " and "))
	default:
		r.Reason = fmt.Sprintf("fencing tokens grew with every grant and the resource took no write older than one it had seen; it rejected %s and %s, and took %s under a superseded lease before its successor touched it.",
			Plural(int(rejectedWrites), "stale write"), Plural(int(rejectedReads), "stale read"), Plural(int(superseded), "write"))
	}
	return r
}

// backwards finds grants on one key whose token is no higher than that of
// a grant that completed before they were invoked. Sweep grants by
// invocation, keeping the highest token among those already completed.
func backwards(key string, gs []fenceGrant) []Anomaly {
	var out []Anomaly
	byInv := slices.SortedFunc(slices.Values(gs), func(a, b fenceGrant) int { return cmp.Compare(a.inv, b.inv) })
	byOK := slices.SortedFunc(slices.Values(gs), func(a, b fenceGrant) int { return cmp.Compare(a.ok, b.ok) })
	var best fenceGrant
	j := 0
	for _, b := range byInv {
		for ; j < len(byOK) && byOK[j].ok < b.inv; j++ {
			if byOK[j].fence > best.fence {
				best = byOK[j]
			}
		}
		if best.lease != "" && b.fence <= best.fence {
			out = append(out, Anomaly{Kind: KindFenceBackwards, At: b.ok, Key: key, Leases: []string{best.lease, b.lease},
				Text: fmt.Sprintf("key %q: lease %s was granted fencing token %d at %s, after lease %s had been granted %d: the resource cannot tell the stale holder",
					key, b.lease, b.fence, at(b.ok), best.lease, best.fence)})
		}
	}
	return out
}

// holdsOutOfOrder finds holds on one key whose token is no higher than that of
// a hold whose window closed before theirs opened: the order the tokens
// give the resource is not the order in which the leases held the key. A
// pair backwards already names (the later acquire invoked after the
// earlier completed) is left to it. Sweep holds by opening, keeping the
// highest token among those already closed.
func holdsOutOfOrder(key string, hs []Hold, grants map[string]fenceGrant) []Anomaly {
	var out []Anomaly
	byOpen := slices.SortedFunc(slices.Values(hs), func(a, b Hold) int { return cmp.Compare(a.AcquiredAt, b.AcquiredAt) })
	byClose := slices.SortedFunc(slices.Values(hs), func(a, b Hold) int { return cmp.Compare(a.Until, b.Until) })
	var best Hold
	j := 0
	for _, b := range byOpen {
		for ; j < len(byClose) && byClose[j].Until <= b.AcquiredAt; j++ {
			if byClose[j].Fence > best.Fence {
				best = byClose[j]
			}
		}
		if best.Lease == "" || b.Fence == 0 || b.Lease == best.Lease || b.Fence > best.Fence {
			continue
		}
		if g, e := grants[b.Lease], grants[best.Lease]; g.lease != "" && e.lease != "" && g.inv > e.ok {
			continue // backwards
		}
		out = append(out, Anomaly{Kind: KindFenceOrder, At: b.AcquiredAt, Key: key, Leases: []string{best.Lease, b.Lease},
			Text: fmt.Sprintf("key %q: lease %s held it until %s with fencing token %d, before lease %s held it from %s with token %d: the resource would take the earlier holder's stale writes and refuse the later one's",
				key, best.Lease, at(best.Until), best.Fence, b.Lease, at(b.AcquiredAt), b.Fence)})
	}
	return out
}

// slippedPast finds ok writes on one key invoked after an ok access with a
// higher token had completed: the resource had seen that token, so it must
// have refused them.
func slippedPast(key string, as []access) []Anomaly {
	byDone := slices.SortedFunc(slices.Values(as), func(a, b access) int { return cmp.Compare(a.op.Complete.Time, b.op.Complete.Time) })
	byInv := slices.SortedFunc(slices.Values(as), func(a, b access) int { return cmp.Compare(a.op.Invoke.Time, b.op.Invoke.Time) })
	var out []Anomaly
	var seen access // the highest token acknowledged so far
	j := 0
	for _, w := range byInv {
		for ; j < len(byDone) && byDone[j].op.Complete.Time < w.op.Invoke.Time; j++ {
			if byDone[j].fence > seen.fence {
				seen = byDone[j]
			}
		}
		if w.op.Invoke.F != history.Write || w.fence >= seen.fence {
			continue
		}
		inv, s := w.op.Invoke, seen.op.Invoke
		out = append(out, Anomaly{Kind: KindStaleWriteAccepted, At: inv.Time, Key: key, Leases: []string{inv.Lease, s.Lease},
			Text: fmt.Sprintf("key %q: the resource took lease %s's write with token %d at %s, after it had acknowledged lease %s's %s with token %d at %s: a stale write slipped past the fence",
				key, inv.Lease, w.fence, at(inv.Time), s.Lease, s.F, seen.fence, at(seen.op.Complete.Time))})
	}
	return out
}

// supersededWrites counts ok writes under a lease invoked after a later
// lease on the same key was granted.
func supersededWrites(gs []fenceGrant, leases map[string]fenceGrant, as []access) int64 {
	oks := make([]int64, len(gs))
	for i, g := range gs {
		oks[i] = g.ok
	}
	sort.Slice(oks, func(i, j int) bool { return oks[i] < oks[j] })
	var n int64
	for _, a := range as {
		mine, ok := leases[a.op.Invoke.Lease]
		if a.op.Invoke.F != history.Write || !ok {
			continue
		}
		// The first grant after mine: superseded if it came before the write.
		if i := sort.Search(len(oks), func(i int) bool { return oks[i] > mine.ok }); i < len(oks) && oks[i] < a.op.Invoke.Time {
			n++
		}
	}
	return n
}
