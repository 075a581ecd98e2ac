package checker

import (
	"slices"
	"sync"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/internal/dense"
)

// Input is the shared analysis of one history, computed once for every
// checker: the paired operations, the fault windows, and the holding
// windows the harness computes itself (see windows.go).
type Input struct {
	// Ops and Pairs are the whole history. A history streamed from a file
	// for checkers that need only the lock view (see streamable) has
	// neither: a million operations fit in memory only without them.
	Ops    []history.Op
	Pairs  []history.Operation
	Faults []FaultWindow
	// Phases are the run's phases, as its history marks them.
	Phases []PhaseSpan
	// Holds are the holding windows per key, in order of acquisition.
	Holds map[string][]Hold
	// ExpiredOnArrival lists leases granted after their TTL had passed.
	ExpiredOnArrival []string
	End              int64
	// Reentrant: the lock lets a holder re-enter (Options.Reentrant);
	// Reentries are the leases granted that way, to a client that held
	// the key already.
	Reentrant bool
	Reentries map[string]bool

	// locks are the lock operations (acquire, release, renew) in
	// invocation order, each folded into one record.
	locks []lockOp
	// nemesis are the fault operations, paired.
	nemesis []history.Operation
	// clocks are client-clock anomalies (clocks.go): events left out of
	// the lock view because their stamps cannot be placed.
	clocks      []Anomaly
	stats       Stats
	byLease     map[string][]Hold // built on first use
	byLeaseOnce sync.Once
}

// lockOp is one lock operation as the lock checkers read it: its
// invocation and completion folded into one record, rather than two
// history.Ops of 256 bytes each.
type lockOp struct {
	f                 history.F
	outcome           history.Type // Info when the history ended first
	key, lease, owner string
	name              leaseName // lease, read
	call              int64     // the invocation's time
	// done is the completion's time, or noCompletion.
	done int64
	// ttl and fence are the invocation's, else the completion's.
	ttl, fence int64
	// ttlSaid is the completion's ttl: the lease time the lock said it set
	// (go-zero rounds a 300 ms request up to 1.5 s); 0 when it said none.
	ttlSaid int64
	// invIndex and doneIndex are history indexes; doneIndex is -1
	// without a completion.
	invIndex, doneIndex int32
	process             int32
	refused             bool
	// queued is when the lock said an acquire stood in line (0: never).
	queued int64
	// via is a renewal's call (history.ViaExtend, ViaReacquire); empty
	// for the lock's own watchdog.
	via string
	// began is when the client began the call, by its own stamp (0: it
	// did not say).
	began int64
	// tried is when the try that took the key began, on an ok acquire of
	// a lock that tries more than once within one (0: it did not say).
	tried int64
	// client is the client the lease belongs to: its owner's first
	// process (successors continue it; a watchdog renews for it).
	client int32
	// keyID is the key's number, in the order the reading first saw it.
	keyID uint32
}

// noCompletion is lockOp.done for an operation the history never completed.
const noCompletion = -1

func (o lockOp) completed() bool { return o.done != noCompletion }

// ttlLongest is the longer of the lease time asked for and the one the
// lock said it set: a bound on how long the key may live.
func (o lockOp) ttlLongest() int64 { return max(o.ttl, o.ttlSaid) }

// ttlShortest is the shorter of the two (of those known): a bound on how
// long the key surely lives.
func (o lockOp) ttlShortest() int64 {
	if o.ttlSaid > 0 && (o.ttl <= 0 || o.ttlSaid < o.ttl) {
		return o.ttlSaid
	}
	return o.ttl
}

// start is when the operation may first have reached Redis: its
// invocation, or later when the client said it began it then.
func (o lockOp) start() int64 { return max(o.call, o.began) }

// from is the earliest the call can have set its key: its invocation, or
// the start of the try that took the key when the client said (an
// acquire that tried more than once). A lease runs from then.
func (o lockOp) from() int64 { return max(o.call, o.tried) }

// NewInput analyses a history; it fails only when operations cannot be
// paired.
func NewInput(ops []history.Op) (*Input, error) { return newInput(ops, true, false) }

// NewInputOf is NewInput for a lock that may declare re-entry
// (Options.Reentrant): a client's leases of one key are one hold.
func NewInputOf(ops []history.Op, reentrant bool) (*Input, error) {
	return newInput(ops, true, reentrant)
}

// newInput is NewInput, with Pairs only when keepPairs, for a reentrant
// lock when reentrant.
func newInput(ops []history.Op, keepPairs, reentrant bool) (*Input, error) {
	b := newInputBuilder(keepPairs, len(ops)/2)
	b.in.Reentrant = reentrant
	var p history.Pairer
	for i := range ops {
		n, err := p.Add(&ops[i])
		if err != nil {
			return nil, err
		}
		if err := b.add(&ops[i], n, &ops[i]); err != nil {
			return nil, err
		}
	}
	in := b.finish()
	in.Ops = ops
	return in, nil
}

// inputBuilder builds an Input one operation at a time, in history order.
type inputBuilder struct {
	in        *Input
	keepPairs bool
	// open holds each process's open operation (one each, as pairing
	// sees to), openNemesis the nemesis's by operation number: an index
	// into in.locks or in.nemesis, or for a resource operation the f it
	// has.
	open        dense.Map[openRecord]
	openNemesis map[int]openRecord
	procs       dense.Map[struct{}]
	keys        map[string]uint32 // each lock key's number, in the order first seen
	keyNames    []string          // the lock keys by number: one string each
	nemesisOp   []history.Op
	leases      *leaseBook
	// spill, when set, takes each lock operation once it completes
	// (or, at the end, never did), rather than in.locks keeping it.
	spill *spill
}

type openRecord struct {
	kind  recordKind
	index int // into in.locks or in.nemesis
	f     history.F
	lock  lockOp // an open lock operation when spilling
}

type recordKind uint8

const (
	lockRecord recordKind = iota
	nemesisRecord
	resourceRecord
)

// newInputBuilder starts an Input; lockHint is how many lock operations to
// make room for (a guess is fine: it saves growing a large slice).
func newInputBuilder(keepPairs bool, lockHint int) *inputBuilder {
	in := &Input{locks: make([]lockOp, 0, lockHint)}
	return &inputBuilder{in: in, keepPairs: keepPairs, openNemesis: map[int]openRecord{}, keys: map[string]uint32{}, leases: newLeaseBook()}
}

// add takes op, operation number n of the history (history.Pairer's).
// stored is op's place in a history kept whole, for Pairs to point at;
// nil when streaming. The error is a lease that is not one client's grant
// (leaseBook).
func (b *inputBuilder) add(op *history.Op, n int, stored *history.Op) error {
	name := nameOf(op.Lease) // read once, for the lease book and the lock view
	if err := b.leases.add(op, name); err != nil {
		return err
	}
	in := b.in
	in.End = max(in.End, op.Time)
	if op.Process == history.NemesisProcess {
		b.nemesisOp = append(b.nemesisOp, *op)
	}
	if b.keepPairs {
		if op.Type == history.Invoke {
			in.Pairs = append(in.Pairs, history.Operation{Invoke: *op})
		} else {
			if stored == nil {
				c := *op
				stored = &c
			}
			in.Pairs[n].Complete = stored
		}
	}
	if op.Type == history.Invoke {
		b.invoke(op, n, name)
		return nil
	}
	rec := b.openOf(op.Process, n)
	if rec == nil {
		return nil
	}
	defer b.closed(op.Process, n)
	switch rec.kind {
	case lockRecord:
		l := &rec.lock
		if b.spill == nil {
			l = &in.locks[rec.index]
		}
		l.outcome, l.done, l.doneIndex = op.Type, op.Time, int32(op.Index)
		l.ttl, l.fence, l.ttlSaid = firstOf(l.ttl, op.TTL), firstOf(op.Fence, l.fence), op.TTL
		l.owner, l.refused, l.queued, l.began, l.tried = firstOf(op.Owner, l.owner), op.Refused, op.Queued, op.Began, op.Tried
		if l.f == history.Acquire && op.Type != history.OK && op.Process >= 0 {
			in.stats.countAcquireError(op.Error)
		}
		if b.spill != nil {
			b.spill.put(l)
		}
	case nemesisRecord:
		c := *op
		in.nemesis[rec.index].Complete = &c
	case resourceRecord:
		b.countResource(rec.f, op.Type)
	}
	return nil
}

// openOf is the record of operation n, open on process p; nil when
// none is kept.
func (b *inputBuilder) openOf(p, n int) *openRecord {
	if p == history.NemesisProcess {
		if rec, ok := b.openNemesis[n]; ok {
			return &rec
		}
		return nil
	}
	return b.open.Ptr(p)
}

func (b *inputBuilder) closed(p, n int) {
	if p == history.NemesisProcess {
		delete(b.openNemesis, n)
		return
	}
	b.open.Delete(p)
}

func (b *inputBuilder) invoke(op *history.Op, n int, name leaseName) {
	in := b.in
	if op.Process >= 0 {
		b.procs.Set(op.Process, struct{}{})
	}
	switch {
	case op.Process == history.NemesisProcess:
		b.openNemesis[n] = openRecord{kind: nemesisRecord, index: len(in.nemesis)}
		in.nemesis = append(in.nemesis, history.Operation{Invoke: *op})
	case op.F.IsLock():
		if op.F == history.Lost && op.Process >= 0 {
			in.stats.Losses++ // and in the lock view: it ends the holder's window
		}
		id, ok := b.keys[op.Key]
		if !ok {
			id = uint32(len(b.keyNames))
			b.keys[op.Key] = id
			b.keyNames = append(b.keyNames, op.Key)
		}
		key := b.keyNames[id]
		l := lockOp{f: op.F, outcome: history.Info, key: key, keyID: id, lease: op.Lease, name: name, owner: op.Owner,
			call: op.Time, done: noCompletion, ttl: op.TTL, fence: op.Fence,
			invIndex: int32(op.Index), doneIndex: -1, process: int32(op.Process), client: b.leases.client(op, name), via: op.Via}
		if b.spill != nil {
			b.spill.opened(&l)
			b.open.Set(op.Process, openRecord{kind: lockRecord, lock: l})
			return
		}
		b.open.Set(op.Process, openRecord{kind: lockRecord, index: len(in.locks)})
		in.locks = append(in.locks, l)
	case op.Process >= 0:
		b.open.Set(op.Process, openRecord{kind: resourceRecord, f: op.F})
	}
}

func (b *inputBuilder) finish() *Input {
	in := b.finishOps()
	in.locks, in.clocks, _ = clientClocks(in.locks)
	in.Holds, in.ExpiredOnArrival, in.Reentries = holdsByKey(in.locks, in.End, in.Reentrant)
	s := &in.stats
	s.Reentries = len(in.Reentries)
	lockStats(s, in.locks)
	s.LongestNoGrantMS, s.LongestNoGrantAt, s.LongestNoGrantOn = longestNoGrant(in.locks)
	s.Faults, s.ExpiredOnArrival = len(in.Faults), len(in.ExpiredOnArrival)
	strikeStats(s, in)
	return in
}

// finishOps ends the reading: operations left open are counted (or
// spilled) as never completed, and the nemesis's record is read.
func (b *inputBuilder) finishOps() *Input {
	in := b.in
	for _, rec := range b.open.All() {
		switch {
		case rec.kind == resourceRecord:
			b.countResource(rec.f, history.Info) // never completed
		case rec.kind == lockRecord && b.spill != nil:
			b.spill.put(&rec.lock)
		}
	}
	in.Faults = faultWindows(b.nemesisOp, in.End)
	in.Phases = phaseSpans(b.nemesisOp, in.End)
	in.stats.Processes, in.stats.Keys = b.procs.Len(), len(b.keys)
	return in
}

// lockStats counts the clients' lock operations.
func lockStats(s *Stats, locks []lockOp) {
	for _, l := range locks {
		if l.process < 0 {
			continue
		}
		switch l.f {
		case history.Acquire:
			count(l.outcome, &s.AcquiresOK, &s.AcquiresFail, &s.AcquiresInfo)
		case history.Release:
			count(l.outcome, &s.ReleasesOK, &s.ReleasesFail, &s.ReleasesInfo)
		case history.Renew:
			s.Renewals++
			if l.outcome == history.OK {
				s.RenewalsOK++
			}
		}
	}
}

// strikeStats counts the faults struck inside a client's operation.
func strikeStats(s *Stats, in *Input) {
	for _, st := range Strikes(in) {
		s.Strikes++
		s.StrikesInside += b2i(st.Inside)
		s.StrikesHit += b2i(st.Hit())
		s.StrikesLate += b2i(st.Late)
		s.StrikesStuck += b2i(st.Stuck)
	}
}

func (b *inputBuilder) countResource(f history.F, t history.Type) {
	s := &b.in.stats
	switch f {
	case history.Read:
		count(t, &s.ReadsOK, &s.ReadsFail, &s.ReadsInfo)
	case history.Write:
		count(t, &s.WritesOK, &s.WritesFail, &s.WritesInfo)
	case history.Order:
		count(t, &s.OrdersOK, &s.OrdersFail, &s.OrdersInfo)
	}
}

// LeaseHolds are the holding windows of one lease.
func (in *Input) LeaseHolds(lease string) []Hold { return in.leaseHolds()[lease] }

// Holding reports whether lease was held at t.
func (in *Input) Holding(lease string, t int64) bool {
	for _, h := range in.leaseHolds()[lease] {
		if h.AcquiredAt <= t && t < h.Until {
			return true
		}
	}
	return false
}

// leaseHolds indexes the holds by lease on first use; checkers run at
// once, so only one builds it.
func (in *Input) leaseHolds() map[string][]Hold {
	in.byLeaseOnce.Do(func() {
		in.byLease = map[string][]Hold{}
		for _, hs := range in.Holds {
			for _, h := range hs {
				in.byLease[h.Lease] = append(in.byLease[h.Lease], h)
			}
		}
	})
	return in.byLease
}

// longestNoGrant finds the longest stretch on one key between two grants
// that followed each other: its length in ms, its start and its key.
func longestNoGrant(locks []lockOp) (ms, at int64, key string) {
	grants := map[string][]int64{}
	for i := range locks {
		if l := &locks[i]; l.f == history.Acquire && l.outcome == history.OK && l.process >= 0 {
			grants[l.key] = append(grants[l.key], l.done)
		}
	}
	var g noGrant
	for k, ts := range grants {
		g.merge(longestGap(ts, k))
	}
	return g.d / int64(time.Millisecond), g.at, g.key
}

// noGrant is the longest stretch without a grant on one key: d long from at.
type noGrant struct {
	d, at int64
	key   string
}

// merge keeps the longer stretch, or of two as long the smaller key's.
func (g *noGrant) merge(o noGrant) {
	if o.d > g.d || (o.d == g.d && o.key < g.key) {
		*g = o
	}
}

// longestGap is the longest stretch between grants ts (sorted here) of key.
func longestGap(ts []int64, key string) noGrant {
	slices.Sort(ts)
	g := noGrant{key: key}
	for i := 1; i < len(ts); i++ {
		if d := ts[i] - ts[i-1]; d > g.d {
			g.d, g.at = d, ts[i-1]
		}
	}
	if g.d == 0 {
		return noGrant{}
	}
	return g
}
