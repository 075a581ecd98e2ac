package checker

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/deadbolt-lab/deadbolt/history"
)

func init() {
	RegisterScoped("releases", "an ok release by a lease that did not hold the key: one never granted, or one that removed the lock of the lease holding the key", LockService,
		func(Options) Checker { return releases{} })
}

// releases judges what a release that succeeded says about the lock. An
// owner-checked lock releases only its own lease, so an ok release is
// impossible when its lease was never granted the key (no acquire of it
// that succeeded, or that may have), and wrong when another lease held
// the key throughout the release while the releasing lease's own window
// had closed: the lock removed someone else's lock (the plain-DEL
// release), or said it released what it did not hold. Neither is a double
// hold, and neither is reported as one. A release whose own window was
// still open while another lease held the key is the double hold's doing,
// and the double-holds checker reports it.
type releases struct{}

// BadRelease is one ok release by a lease that did not hold the key.
type BadRelease struct {
	Key     string `json:"key"`
	Lease   string `json:"lease"`
	Process int    `json:"process"`
	// Invoked and Done bound when the release took effect; Index is its
	// invocation's history index.
	Invoked int64 `json:"invoked"`
	Done    int64 `json:"done"`
	Index   int   `json:"index"`
	// NeverGranted: no acquire of Lease on Key succeeded or may have.
	NeverGranted bool `json:"never_granted,omitempty"`
	// Holder held the key throughout the release: its lock was removed.
	Holder *Hold `json:"holder,omitempty"`
}

func (b BadRelease) String() string {
	s := fmt.Sprintf("process %d released lease %s of key %q (ok, between %s and %s, op %d)", b.Process, b.Lease, b.Key, at(b.Invoked), at(b.Done), b.Index)
	if b.NeverGranted {
		return s + ", a lease never granted that key: an impossible release"
	}
	return s + fmt.Sprintf(" after its own holding window had closed, while %s held the key throughout: the release said ok of someone else's lock (it removed it, or answered without asking Redis)", holder(*b.Holder))
}

func (r releases) Check(in *Input) Result { return checkWhole(r, in) }

func (releases) Part(in *Input, at PartAt) (any, any) { return badReleasesAfter(in, at.Before), nil }

func (releases) Merge(_ *Input, parts []any) Result {
	br := []BadRelease{}
	for _, p := range parts {
		br = append(br, p.([]BadRelease)...)
	}
	sort.SliceStable(br, func(i, j int) bool {
		return cmp.Or(cmp.Compare(br[i].Invoked, br[j].Invoked), cmp.Compare(br[i].Index, br[j].Index)) < 0
	})
	return releasesResult(br)
}

// releasesResult is the verdict on the bad releases found, in order.
func releasesResult(found []BadRelease) Result {
	r := newResult("releases")
	r.Details = found
	r.Metrics["bad_releases"] = int64(len(found))
	for _, b := range found {
		leases := []string{b.Lease}
		if b.Holder != nil {
			leases = append(leases, b.Holder.Lease)
		}
		r.Anomalies = append(r.Anomalies, Anomaly{Kind: KindReleaseNotHeld, At: b.Invoked, Key: b.Key, Leases: leases, Text: b.String()})
	}
	if len(found) == 0 {
		r.Reason = "every release that succeeded was by a lease that held its key, or may have when the release took effect."
		return r
	}
	r.Verdict = Invalid
	r.Reason = fmt.Sprintf("the lock released what it did not hold: %s by a lease that did not hold the key (the first: %s).",
		Plural(len(found), "ok release"), found[0])
	return r
}

// grantedEarlier reports whether earlier (nil for none) names lease.
func grantedEarlier(earlier func(lease string) (int, bool), lease string) bool {
	if earlier == nil {
		return false
	}
	_, ok := earlier(lease)
	return ok
}

var (
	grantedScratch scratchMap[leaseID, bool]
	goneByScratch  scratchMap[string, int64]
)

// badReleasesAfter is badReleases where leases earlier also granted the key
// (a window's leases still open from before it: window.go); nil for none.
func badReleasesAfter(in *Input, earlier func(lease string) (int, bool)) []BadRelease {
	// Sized for a lease per two operations, as refreshesOf's.
	granted := grantedScratch.get(len(in.locks) / 2)
	defer grantedScratch.put(granted)
	for i := range in.locks {
		if l := &in.locks[i]; l.f == history.Acquire && l.outcome != history.Fail {
			granted[leaseID{l.key, l.lease}] = true
		}
	}
	// A lease's key is surely gone a TTL after the last grant or renewal
	// of it that may have landed came back.
	goneBy := goneByScratch.get(len(in.locks) / 2)
	defer goneByScratch.put(goneBy)
	for i := range in.locks {
		if l := &in.locks[i]; (l.f == history.Acquire || l.f == history.Renew) && l.outcome != history.Fail {
			goneBy[l.lease] = max(goneBy[l.lease], expiry(l.done, l.ttl))
		}
	}
	until := map[string][]int64{} // key -> the latest Until among its first i+1 holds
	defer func() {
		for _, u := range until {
			untilScratch.put(u)
		}
	}()
	found := []BadRelease{}
	for i := range in.locks {
		l := &in.locks[i]
		if l.f != history.Release || l.outcome != history.OK || l.process < 0 {
			continue
		}
		// A release the client began after its lease was surely gone (a
		// stopped client reads its request when it wakes) took effect then,
		// not when it was sent, while its lease still held.
		start := l.call
		// (Not on a reentrant lock: a client's leases share one key, which
		// its other leases' renewals keep. A lease granted before a
		// window's cut has no grant here and counts as gone by 0: a cut
		// falls only where every lease has run out by its TTL.)
		if g := goneBy[l.lease]; !in.Reentrant && l.began > 0 && g != never && l.began > g+expiryMargin(l.ttl) {
			start = l.began
		}
		b := BadRelease{Key: l.key, Lease: l.lease, Process: int(l.process), Invoked: start, Done: l.done, Index: int(l.invIndex)}
		if !granted[leaseID{l.key, l.lease}] && !grantedEarlier(earlier, l.lease) {
			b.NeverGranted = true
			found = append(found, b)
			continue
		}
		holds := in.Holds[l.key]
		if until[l.key] == nil {
			until[l.key] = latestUntil(holds)
		}
		if h := heldThroughout(holds, until[l.key], l, start); h != nil {
			b.Holder = h
			found = append(found, b)
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].Invoked < found[j].Invoked })
	return found
}

// untilScratch pools latestUntil's slices, which its callers put back.
var untilScratch scratchSlice[int64]

func latestUntil(holds []Hold) []int64 {
	out := untilScratch.get(len(holds))[:len(holds)]
	var m int64
	for i, h := range holds {
		m = max(m, h.Until)
		out[i] = m
	}
	return out
}

// heldThroughout finds another lease's window that covers the whole of
// release l while l's own lease held nothing when the client began it; holds
// are one key's, by acquisition, and until their running latest Until.
func heldThroughout(holds []Hold, until []int64, l *lockOp, start int64) *Hold {
	// Holds acquired by the release's invocation; walk back while one of
	// them may still last past its completion.
	n, _ := slices.BinarySearchFunc(holds, start, func(h Hold, t int64) int {
		if h.AcquiredAt <= t {
			return -1
		}
		return 1
	})
	var other *Hold
	own := false
	for j := n - 1; j >= 0; j-- {
		h := &holds[j]
		if start == l.call && h.Lease == l.lease && h.Until >= l.call { // else its lease was surely gone
			own = true
		}
		if other == nil && h.Lease != l.lease && h.Until >= l.done {
			other = h
		}
		if until[j] < start {
			break // nothing earlier reaches the release
		}
	}
	if own || other == nil {
		return nil
	}
	c := *other
	return &c
}
