package checker

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
)

func init() {
	RegisterScoped("replies", "every yes the lock gave on a held lease, held to what the harness saw: an extend or renewal said ok after the lease had run out on every node, or while another lease held the key; a reacquire said ok while another held it; an unlock said ok after the key was gone, or said not held while its lease surely held the key; a watchdog renewing in a storm", LockService,
		func(Options) Checker { return replies{} })
}

// replies judges the lock's yes on a lease it granted, which a holder goes
// on working on. What the harness knows bounds what the lock can truly
// have seen on Redis:
//
//   - a lease's key is gone from every node by the latest completion of
//     an acquire or renewal of it that may have taken effect, plus the TTL
//     (the command ran before its reply came back, and Redis expires keys
//     by a clock that runs at the harness's rate, unless a clock fault
//     moved it): a renewal or unlock invoked later that says ok said so
//     of a key that was not there;
//   - another lease's key is on the lock service throughout that lease's
//     holding window (windows.go), unless a fault on the nodes (or a
//     failover) could have lost it: a renewal of this lease that ran
//     entirely inside it and says ok said so of another's key.
//
// A correct lock answers no to both (an owner-checked PEXPIRE or DEL finds
// the key gone or someone else's). A reacquire that comes after the lease
// ran out is an acquire, and may take a free key: only the second rule
// holds it. An unlock of another's key is the releases checker's.
// renewal-storm is a watchdog renewing far faster than any lease needs:
// a liveness and CPU failure, not a safety one.
type replies struct{}

// Bad replies, by kind.
const (
	// KindExtendAfterExpiry is an extend or watchdog renewal that said ok
	// after the lease had run out on every node.
	KindExtendAfterExpiry = "extend-after-expiry"
	// KindExtendNotHeld is an extend or watchdog renewal that said ok
	// while another lease held the key.
	KindExtendNotHeld = "extend-not-held"
	// KindReacquireNotHeld is a reacquire (the holder's acquire of a key
	// it holds, through the same lock object) that said ok while another
	// lease held the key: answered without Redis, or by taking another's.
	KindReacquireNotHeld = "reacquire-not-held"
	// KindReleaseAfterExpiry is an unlock that said ok after the key was
	// gone from every node.
	KindReleaseAfterExpiry = "release-after-expiry"
	// KindReleaseRefusedHeld is an unlock that said the lease no longer
	// held its key while, by every bound, it did: a false no (a release
	// retried after its first attempt deleted the key reads "not held").
	KindReleaseRefusedHeld = "release-refused-held"
	// KindRenewalStorm is a lease renewed by the lock's own watchdog more
	// than stormRenewals times within one TTL.
	KindRenewalStorm = "renewal-storm"
)

// stormRenewals is how many renewals of one lease within one TTL make a
// storm: watchdogs renew every TTL/3 or TTL/2, and at once on an
// invalidation; a busy loop renews thousands of times.
const stormRenewals = 50

// BadReply is one yes the harness shows false (or a storm of them).
type BadReply struct {
	Kind    string `json:"kind"`
	Key     string `json:"key"`
	Lease   string `json:"lease"`
	Process int    `json:"process"`
	// Call is what was asked: extend, reacquire, renew (the watchdog's),
	// release.
	Call    string `json:"call"`
	Invoked int64  `json:"invoked"`
	// Began is when the client began the call, when it said.
	Began int64 `json:"began,omitempty"`
	Done  int64 `json:"done"`
	Index int   `json:"index"`
	// GoneBy is when the lease had run out on every node at the latest.
	GoneBy int64 `json:"gone_by,omitempty"`
	// HeldUntil is when a refused release's lease held its key until at
	// the earliest.
	HeldUntil int64 `json:"held_until,omitempty"`
	// Holder held the key throughout the call.
	Holder *Hold `json:"holder,omitempty"`
	// Renewals counts a storm's renewals within one TTL from Invoked.
	Renewals int `json:"renewals,omitempty"`
}

func (b BadReply) String() string {
	s := fmt.Sprintf("process %d's %s of lease %s on key %q said ok (between %s and %s, op %d)", b.Process, b.Call, b.Lease, b.Key, at(b.Invoked), at(b.Done), b.Index)
	if b.Began > b.Invoked {
		s = fmt.Sprintf("process %d's %s of lease %s on key %q said ok (sent at %s, begun by the client at %s, answered at %s, op %d)", b.Process, b.Call, b.Lease, b.Key, at(b.Invoked), at(b.Began), at(b.Done), b.Index)
	}
	switch b.Kind {
	case KindExtendAfterExpiry, KindReleaseAfterExpiry:
		return s + fmt.Sprintf(", yet the lease had run out on every node by %s (a TTL after the last acquire or renewal that may have reached Redis came back): the key was gone, and a correct lock says no", at(b.GoneBy))
	case KindExtendNotHeld, KindReacquireNotHeld:
		return s + fmt.Sprintf(", while %s held the key throughout, with no fault on the nodes: a correct lock says no", holder(*b.Holder))
	case KindReleaseRefusedHeld:
		return fmt.Sprintf("process %d's %s of lease %s on key %q said not held (sent at %s, answered at %s, op %d), yet the lease held the key throughout: its key could not expire before %s (a TTL after the last grant or renewal that said ok was sent), no other lease took or released the key, and no fault could remove it: a correct lock says ok (the release removed the key and said it had not, as a retried one does)",
			b.Process, b.Call, b.Lease, b.Key, at(b.Invoked), at(b.Done), b.Index, at(b.HeldUntil))
	case KindRenewalStorm:
		return fmt.Sprintf("the lock's watchdog renewed lease %s of process %d on key %q %d times within one TTL from %s: a busy loop (a liveness and CPU failure)", b.Lease, b.Process, b.Key, b.Renewals, at(b.Invoked))
	}
	return s
}

func (c replies) Check(in *Input) Result { return checkWhole(c, in) }

// repliesCarry is what a key's window leaves the next: for each lease
// that may still be renewed or released, when its key was gone by.
type repliesCarry map[string]int64

func (replies) Part(in *Input, at PartAt) (any, any) {
	carried, _ := at.Carry.(repliesCarry)
	found, goneBy := badReplies(in, carried)
	defer boundsScratch.put(goneBy)
	next := repliesCarry{}
	if at.Open != nil { // a window: the next needs the bounds of the leases it may name
		for lease, t := range goneBy {
			if at.Open(lease) {
				next[lease] = t
			}
		}
	}
	return found, next
}

func (replies) Merge(_ *Input, parts []any) Result {
	found := []BadReply{}
	for _, p := range parts {
		found = append(found, p.([]BadReply)...)
	}
	sort.SliceStable(found, func(i, j int) bool {
		return cmp.Or(cmp.Compare(found[i].Invoked, found[j].Invoked), cmp.Compare(found[i].Index, found[j].Index)) < 0
	})
	return repliesResult(found)
}

func repliesResult(found []BadReply) Result {
	r := newResult("replies")
	r.Details = found
	counts := map[string]int64{}
	for _, b := range found {
		leases := []string{b.Lease}
		if b.Holder != nil {
			leases = append(leases, b.Holder.Lease)
		}
		r.Anomalies = append(r.Anomalies, Anomaly{Kind: b.Kind, At: b.Invoked, Key: b.Key, Leases: leases, Text: b.String()})
		counts[b.Kind]++
	}
	for k, n := range counts {
		r.Metrics[k] = n
	}
	if len(found) == 0 {
		r.Reason = "every extend, renewal, reacquire and unlock that said ok may have been true when it ran, and every unlock that said not held may have been right."
		return r
	}
	r.Verdict = Invalid
	var said []string
	var falseYes, falseNo, storm *BadReply
	n, nos := 0, 0
	for i := range found {
		switch b := &found[i]; {
		case b.Kind == KindRenewalStorm:
			storm = cmp.Or(storm, b)
		case b.Kind == KindReleaseRefusedHeld:
			nos++
			falseNo = cmp.Or(falseNo, b)
		default:
			n++
			falseYes = cmp.Or(falseYes, b)
		}
	}
	if falseYes != nil {
		said = append(said, fmt.Sprintf("the lock said yes where the harness shows no: %s (the first: %s)", Plural(n, "false yes"), falseYes))
	}
	if falseNo != nil {
		said = append(said, fmt.Sprintf("the lock said a lease was not held where the harness shows it was: %s (the first: %s)", Plural(nos, "false no"), falseNo))
	}
	if storm != nil {
		said = append(said, fmt.Sprintf("its watchdog renewed in a busy loop: %s", storm))
	}
	r.Reason = strings.Join(said, "; ") + "."
	return r
}

// refresh is an acquire or renewal of a lease that may have reached Redis.
// ttl bounds how long it may keep the key (the longer of the time asked
// and the time the lock said it set), least how long it surely does.
type refresh struct {
	call, done, ttl, least int64 // done is never for one never answered
	// from is the earliest it can have set the key (lockOp.from).
	from int64
	self int // its index in the part's locks
}

// badReplies finds the false yeses among in's lock operations; carried
// gives, for leases of earlier windows, when their key was gone by. It
// returns those bounds for the leases of this part too.
func badReplies(in *Input, carried repliesCarry) ([]BadReply, map[string]int64) {
	locks := in.locks
	facts := refreshesOf(locks)
	defer facts.put()
	byLease := facts.byLease
	var one [1]string // shared's answer without re-entry, made once
	shared := func(lease string) []string {
		if !in.Reentrant {
			one[0] = lease
			return one[:]
		}
		var out []string
		for other, o := range byLease {
			if o.owner == byLease[lease].ownerOf() {
				out = append(out, other)
			}
		}
		return out
	}
	// goneBy is when the key of lease was gone by, counting its refreshes
	// (and its client's, on a reentrant lock) invoked before t, but self.
	goneBy := func(lease string, t int64, self int) int64 {
		bound := int64(0)
		for _, ls := range shared(lease) {
			bound = max(bound, carried[ls])
			for _, r := range byLease[ls].refreshesOf() {
				if r.self != self && r.call < t {
					bound = max(bound, expiry(r.done, r.ttl))
				}
			}
		}
		return bound
	}
	holds := in.Holds
	untils := map[string][]int64{} // key -> the latest Until among its first i+1 holds
	defer func() {
		for _, u := range untils {
			untilScratch.put(u)
		}
	}()
	var found []BadReply
	for i := range locks {
		l := &locks[i]
		if b, ok := falseNo(in, l, shared, byLease); ok {
			found = append(found, b)
			continue
		}
		if l.process < 0 || l.outcome != history.OK || (l.f != history.Renew && l.f != history.Release) {
			continue
		}
		b := BadReply{Key: l.key, Lease: l.lease, Process: int(l.process), Call: callOf(l), Invoked: l.call, Began: l.began, Done: l.done, Index: int(l.invIndex)}
		gone := goneBy(l.lease, l.done, i)
		first := byLease[l.lease].firstOf()
		since := min(first, carriedSince(carried, l.lease, first))
		afterExpiry := gone > 0 && gone != never && l.start() > gone+expiryMargin(l.ttl) && !clockFaultDuring(in.Faults, since, l.done)
		u, ok := untils[l.key]
		if !ok {
			u = latestUntil(holds[l.key])
			untils[l.key] = u
		}
		h := otherHolder(holds[l.key], u, l, in.Reentrant)
		switch {
		case l.f == history.Release:
			if afterExpiry && h == nil { // an unlock of another's key is the releases checker's
				b.Kind, b.GoneBy = KindReleaseAfterExpiry, gone
				found = append(found, b)
			}
		case h != nil && keptOn(in, h.AcquiredAt, l.done):
			b.Kind, b.Holder = KindExtendNotHeld, h
			if l.via == history.ViaReacquire {
				b.Kind = KindReacquireNotHeld
			}
			found = append(found, b)
		case afterExpiry && l.via != history.ViaReacquire:
			b.Kind, b.GoneBy = KindExtendAfterExpiry, gone
			found = append(found, b)
		}
	}
	found = append(found, storms(locks)...)
	bounds := boundsScratch.get(len(byLease) + len(carried))
	for lease, facts := range byLease {
		if len(facts.refreshes) > 0 {
			bounds[lease] = goneBy(lease, never, -1)
		}
	}
	for lease, t := range carried {
		if _, ok := bounds[lease]; !ok {
			bounds[lease] = t
		}
	}
	return found, bounds
}

// leaseOwner is a lease's client and key: a reentrant lock's holds of one
// client on one key share its key.
type leaseOwner struct {
	client int32
	key    string
}

// leaseFacts are what badReplies reads of one lease in a part: its
// refreshes that may have reached Redis, its client and key (owner), and
// when it was first invoked.
type leaseFacts struct {
	refreshes []refresh
	owner     leaseOwner
	first     int64
}

// The facts of a lease the part does not name are none.
func (f *leaseFacts) refreshesOf() []refresh {
	if f == nil {
		return nil
	}
	return f.refreshes
}

func (f *leaseFacts) ownerOf() leaseOwner {
	if f == nil {
		return leaseOwner{}
	}
	return f.owner
}

func (f *leaseFacts) firstOf() int64 {
	if f == nil {
		return 0
	}
	return f.first
}

// boundsScratch pools badReplies' bounds, which Part reads and drops.
var boundsScratch scratchMap[string, int64]

// partFacts are the facts of each lease of a part, in a slab whose
// leases' refreshes keep their arrays for the next part that reuses it.
type partFacts struct {
	byLease map[string]*leaseFacts
	slab    []leaseFacts
	large   bool // made for a key checked whole: not kept
}

var partFactsPool = sync.Pool{New: func() any { return new(partFacts) }}

// put keeps f for reuse, unless a key checked whole made it large; nothing
// may read it after.
func (f *partFacts) put() {
	if f.large {
		return
	}
	clear(f.byLease)
	f.slab = f.slab[:0]
	partFactsPool.Put(f)
}

// refreshesOf are the facts of each lease of locks: the refreshes (grants
// and renewals) that may have reached Redis, the client and key that
// own it, and when its first operation was invoked.
func refreshesOf(locks []lockOp) *partFacts {
	// Sized for a lease per two operations (an acquire and its release),
	// so that a window's map rarely grows while filled; the slab holds
	// a lease per operation, so that it never moves.
	f := &partFacts{large: true}
	if len(locks) <= maxScratch {
		f = partFactsPool.Get().(*partFacts)
	}
	if f.byLease == nil {
		f.byLease = make(map[string]*leaseFacts, len(locks)/2)
	}
	if cap(f.slab) < len(locks) {
		f.slab = make([]leaseFacts, 0, len(locks))
	}
	byLease := f.byLease
	for i := range locks {
		l := &locks[i]
		if l.process < 0 || l.lease == "" {
			continue
		}
		facts := byLease[l.lease]
		if facts == nil {
			f.slab = f.slab[:len(f.slab)+1]
			facts = &f.slab[len(f.slab)-1]
			*facts = leaseFacts{refreshes: facts.refreshes[:0], owner: leaseOwner{l.client, l.key}, first: l.call}
			byLease[l.lease] = facts
		}
		if (l.f == history.Acquire || l.f == history.Renew) && l.outcome != history.Fail {
			done := l.done
			if !l.completed() {
				done = never
			}
			facts.refreshes = append(facts.refreshes, refresh{call: l.call, from: l.from(), done: done, ttl: l.ttlLongest(), least: l.ttlShortest(), self: i})
		}
	}
	return f
}

// carriedSince is when a lease carried from an earlier window began at
// the earliest: it was granted before this part (first).
func carriedSince(carried repliesCarry, lease string, first int64) int64 {
	if _, ok := carried[lease]; ok {
		return 0
	}
	return first
}

func callOf(l *lockOp) string {
	switch {
	case l.f == history.Release:
		return "unlock"
	case l.via != "":
		return l.via
	}
	return "watchdog renewal"
}

// expiryMargin covers Redis's millisecond expiry and a clock rate a little
// off the harness's.
func expiryMargin(ttl int64) int64 { return max(int64(5*time.Millisecond), ttl/100) }

// clockFaultDuring reports a clock fault that may have moved a node's
// clock within [a, b].
func clockFaultDuring(ws []FaultWindow, a, b int64) bool {
	for _, w := range ws {
		if w.OnClock() && w.Start <= b && w.End >= a {
			return true
		}
	}
	return false
}

// otherHolder is the first hold of another lease (another client's, on a
// reentrant lock) whose window covers the whole of l. holds are in order
// of acquisition, until their latest Untils (latestUntil): the holds
// before the first to reach l's return all end sooner, and those after
// the last acquired by l's start begin later, so only those between are
// looked at (a scan of them all made the check quadratic in a window).
func otherHolder(holds []Hold, until []int64, l *lockOp, reentrant bool) *Hold {
	from, _ := slices.BinarySearch(until, l.done)
	start := l.start()
	for i := from; i < len(holds) && holds[i].AcquiredAt <= start; i++ {
		h := &holds[i]
		if h.Lease == l.lease || (reentrant && int32(h.Client) == l.client) {
			continue
		}
		if h.Until >= l.done {
			c := *h
			return &c
		}
	}
	return nil
}

// falseNo judges a release the lock refused ("not held"): a false no
// when the lease surely held its key through the call. Its key could not
// expire before a TTL after the last ok grant or renewal was sent (the
// command ran after that), no other lease acquired or released the key
// since the grant's try began (another's bad release may have deleted it;
// one that ended before the try, as a blocking acquire's wait behind it
// does, cannot have), and no fault or failover that can remove a key came
// between.
func falseNo(in *Input, l *lockOp, shared func(string) []string, byLease map[string]*leaseFacts) (BadReply, bool) {
	if l.process < 0 || l.f != history.Release || l.outcome != history.Fail || !l.refused {
		return BadReply{}, false
	}
	granted, heldUntil := int64(never), int64(0)
	for _, ls := range shared(l.lease) {
		for _, r := range byLease[ls].refreshesOf() {
			if o := &in.locks[r.self]; o.outcome == history.OK && r.done <= l.start() {
				granted, heldUntil = min(granted, r.from), max(heldUntil, expiry(r.from, r.least))
			}
		}
	}
	if granted == never || heldUntil == never || l.done+expiryMargin(l.ttl) >= heldUntil {
		return BadReply{}, false
	}
	// Another's acquire cannot remove a key that is there; one granted
	// before the release began means the key had changed hands already
	// (the double-holds checker's). Another's release may have deleted it.
	own := shared(l.lease)
	for i := range in.locks {
		o := &in.locks[i]
		if o.key != l.key || slices.Contains(own, o.lease) {
			continue
		}
		end := o.done
		if !o.completed() {
			end = never
		}
		grantedBefore := o.f == history.Acquire && o.outcome == history.OK && o.done < l.start() && o.done >= granted
		deleting := o.f == history.Release && o.outcome != history.Fail && o.call <= l.done && end >= granted
		if grantedBefore || deleting {
			return BadReply{}, false
		}
	}
	for _, w := range in.Faults {
		if !w.KeepsKeys() && w.Start <= l.done && w.End >= granted {
			return BadReply{}, false
		}
	}
	for _, op := range in.nemesis {
		if op.Invoke.F == history.Failover && op.Invoke.Time >= granted && op.Invoke.Time <= l.done {
			return BadReply{}, false
		}
	}
	return BadReply{Kind: KindReleaseRefusedHeld, Key: l.key, Lease: l.lease, Process: int(l.process), Call: callOf(l),
		Invoked: l.call, Began: l.began, Done: l.done, Index: int(l.invIndex), HeldUntil: heldUntil}, true
}

// keptOn reports that the lock service kept every key it held from a to
// b: no fault on its nodes (a fault on clients or their links changes
// nothing there) and no failover within.
func keptOn(in *Input, a, b int64) bool {
	for _, w := range in.Faults {
		if !w.OnClients() && w.Start <= b && w.End >= a {
			return false
		}
	}
	for _, op := range in.nemesis {
		if op.Invoke.F == history.Failover && op.Invoke.Time >= a && op.Invoke.Time <= b {
			return false
		}
	}
	return true
}

// storms finds leases that the lock's own watchdog renewed more than
// stormRenewals times within one TTL, once each.
func storms(locks []lockOp) []BadReply {
	byLease := map[string][]*lockOp{}
	for i := range locks {
		if l := &locks[i]; l.f == history.Renew && l.via == "" && l.ttl > 0 {
			byLease[l.lease] = append(byLease[l.lease], l)
		}
	}
	var out []BadReply
	for _, rs := range byLease {
		slices.SortFunc(rs, func(a, b *lockOp) int { return cmp.Compare(a.call, b.call) })
		var worst BadReply
		for i, j := 0, 0; i < len(rs); i++ {
			for rs[j].call < rs[i].call-rs[i].ttl {
				j++
			}
			if n := i - j + 1; n > stormRenewals && n > worst.Renewals {
				s := rs[j]
				worst = BadReply{Kind: KindRenewalStorm, Key: s.key, Lease: s.lease, Process: int(s.process), Call: "watchdog renewal",
					Invoked: s.call, Done: rs[i].call, Index: int(s.invIndex), Renewals: n}
			}
		}
		if worst.Renewals > 0 {
			out = append(out, worst)
		}
	}
	return out
}
