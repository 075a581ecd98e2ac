package checker

import (
	"cmp"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
)

// Checking a streamed history key by key. Every lock checker's findings on
// a history are the union of its findings on each key alone: holding
// windows, double holds, the lease-lock search, refused acquires, queues
// and releases are all per key. So a history read from a file is checked
// one bucket of keys per CPU from its spill (spill.go), and the per-key
// findings are composed into the very results the whole-history check
// gives (keyed_test.go compares the two). Each key is itself checked a
// window at a time (window.go), so a bucket is read as a stream and what
// is held is each key's open window.
//
// What is not per key is the nemesis's record, which the reading keeps
// (it is small), and the checks it drives (strikes, preconditions), which
// look only at the keys its steps name: those keys' operations are kept
// beside it.

// keyPart is what checking one key leaves for the report.
type keyPart struct {
	key   string
	stats Stats
	gap   noGrant
	holds int
	// expired are the leases granted after their TTL had passed.
	expired []string
	clocks  []Anomaly
	dropped []int32 // the history index of each clock anomaly's renewal
	// early is the key's first client operation sent before the faults
	// phase began, if any.
	early *lockOp
	// locks and byKey are kept for a key the nemesis named.
	locks []lockOp
	held  []Hold

	dh    []DoubleHold
	ll    LeaseLockResult
	un    []Unavailability
	jumps []QueueJump
	// parts are the Parted checkers' parts, by checker, in window order.
	parts map[string][]any
	// queued, pairs and passed are fairness's counts.
	queued        int
	pairs, passed int64
}

// checkKeys checks each key of the spilled history whose reading left
// the builder b, and composes the report.
func checkKeys(b *inputBuilder, sp *spill, names []string, opts Options) (Report, error) {
	g := b.finishOps()
	if err := sp.flush(); err != nil {
		return Report{}, err
	}
	named := map[string]bool{}
	for _, op := range b.nemesisOp {
		if op.Key != "" {
			named[op.Key] = true
		}
	}
	var (
		mu    sync.Mutex
		parts []*keyPart
		first error
	)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(sp.bucketCount(), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				run := &windowRun{g: g, names: names, opts: opts, closed: newLeaseSet(), parted: map[string]Parted{}}
				for _, n := range names {
					if c, ok := partedOf(n, opts); ok {
						run.parted[n] = c
					}
				}
				got, err := checkBucket(run, sp, i, named)
				mu.Lock()
				parts = append(parts, got...)
				first = cmp.Or(first, err)
				mu.Unlock()
			}
		}()
	}
	for i := range sp.bucketCount() {
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		return Report{}, first
	}
	slices.SortFunc(parts, func(a, b *keyPart) int { return cmp.Compare(a.key, b.key) })
	summarize(g, parts)
	results := make([]Result, len(names))
	for i, n := range names {
		results[i] = mergeKeys(n, parts, g, opts)
		results[i].Checker = n
	}
	return compose(g, results, opts), nil
}

// checkBucket checks the keys of spill bucket i a window at a time
// (window.go), reading the bucket as a stream; the keys that cannot be
// (named ones, and those sent to be checked whole) are read again and
// checked whole.
func checkBucket(run *windowRun, sp *spill, i int, named map[string]bool) ([]*keyPart, error) {
	if sp.buckets[i] == nil {
		return nil, nil
	}
	keys := map[uint32]*keyWindows{}
	r := sp.reader(i)
	for {
		l, id, cut, ok := r.next()
		if !ok {
			break
		}
		kw := keys[id]
		if kw == nil {
			kw = newKeyWindows(run, l.key, named[l.key])
			keys[id] = kw
		}
		kw.add(l, cut)
	}
	if r.err != nil {
		return nil, r.err
	}
	var parts []*keyPart
	// whole are the keys to check whole, with the steps their windows'
	// search took before it gave up.
	whole := map[uint32]*pieceChain{}
	spent := map[string]*pieceChain{}
	for id, kw := range keys {
		if p := kw.finish(); p != nil {
			parts = append(parts, p)
		} else {
			whole[id], spent[kw.key] = kw.chain, kw.chain
			if !kw.named {
				windowCounts.redone.Add(1)
			}
		}
		delete(keys, id) // its windows are done with
	}
	if len(whole) == 0 {
		return parts, nil
	}
	byKey, err := sp.loadKeys(i, func(id uint32) bool { return whole[id] != nil })
	for k, locks := range byKey {
		p := checkKey1(run.g, k, locks, named[k], run.names, run.opts)
		if c := spent[k]; c != nil {
			p.ll.Steps, p.ll.MostSteps = p.ll.Steps+c.steps, max(p.ll.MostSteps, c.most)
		}
		parts = append(parts, p)
		delete(byKey, k)
	}
	return parts, err
}

// checkKey1 checks one key's lock operations, in invocation order.
func checkKey1(g *Input, key string, locks []lockOp, named bool, names []string, opts Options) *keyPart {
	in := &Input{Faults: g.Faults, Phases: g.Phases, End: g.End, Reentrant: g.Reentrant, nemesis: g.nemesis}
	p := &keyPart{key: key}
	in.locks, p.clocks, p.dropped = clientClocks(locks)
	in.Holds, in.ExpiredOnArrival, in.Reentries = holdsByKey(in.locks, in.End, in.Reentrant)
	p.expired = in.ExpiredOnArrival
	p.stats.Reentries = len(in.Reentries)
	lockStats(&p.stats, in.locks)
	var grants []int64
	for i := range in.locks {
		if l := &in.locks[i]; l.f == history.Acquire && l.outcome == history.OK && l.process >= 0 {
			grants = append(grants, l.done)
		}
	}
	p.gap = longestGap(grants, key)
	p.holds = len(in.Holds[key])
	p.early = earlyOp(in.Phases, in.locks)
	if named {
		p.locks, p.held = in.locks, in.Holds[key]
	}
	for _, n := range names {
		switch n {
		case "double-holds":
			p.dh = findDoubleHolds(in.Holds, in.Faults, in.Reentrant)
		case "lease-lock":
			p.ll = checkLeaseLock(in.locks, in.Faults, opts.modelSteps(), in.Reentrant)
			if len(p.ll.FailedKeys) == 0 {
				p.ll.byKey, p.ll.info = nil, nil // kept only to draw a failed key
			}
		case "liveness":
			p.un = liveness{threshold: opts.LivenessThreshold}.unavailable(in)
		case "fairness":
			p.jumps, p.queued, p.pairs, p.passed = queueJumpsOf(in)
		default:
			if c, ok := partedOf(n, opts); ok {
				part, _ := c.Part(in, PartAt{})
				p.addPart(n, part)
			}
		}
	}
	return p
}

func (p *keyPart) addPart(name string, part any) {
	if p.parts == nil {
		p.parts = map[string][]any{}
	}
	p.parts[name] = append(p.parts[name], part)
}

// mergeKeys composes checker n's result from its findings on each key,
// parts in key order; g is the history's summary, its stats to be filled.
func mergeKeys(n string, parts []*keyPart, g *Input, opts Options) Result {
	switch n {
	case "double-holds":
		var dh []DoubleHold
		holds := 0
		for _, p := range parts {
			dh, holds = append(dh, p.dh...), holds+p.holds
		}
		sortDoubleHolds(dh)
		return doubleHoldResult(dh, holds, len(g.ExpiredOnArrival))
	case "lease-lock":
		all := keyed(modelFor(g.Reentrant))
		ll := LeaseLockResult{Verdict: Valid, byKey: map[string][]*lockOp{}, faults: g.Faults, steps: opts.modelSteps(), model: all.ToModel()}
		for _, p := range parts {
			r := p.ll
			ll.FailedKeys, ll.FailedAt = append(ll.FailedKeys, r.FailedKeys...), append(ll.FailedAt, r.FailedAt...)
			ll.Anomalies, ll.UnknownKeys = append(ll.Anomalies, r.Anomalies...), append(ll.UnknownKeys, r.UnknownKeys...)
			ll.Keys, ll.Operations = ll.Keys+r.Keys, ll.Operations+r.Operations
			ll.Steps, ll.MostSteps = ll.Steps+r.Steps, max(ll.MostSteps, r.MostSteps)
			for _, k := range r.FailedKeys {
				ll.byKey[k] = r.byKey[k] // what WriteVisualization draws
			}
		}
		switch {
		case len(ll.FailedKeys) > 0:
			ll.Verdict = Invalid
		case len(ll.UnknownKeys) > 0:
			ll.Verdict = Unknown
		}
		return leaseLockResult(ll, opts.modelSteps())
	case "liveness":
		var un []Unavailability
		for _, p := range parts {
			un = append(un, p.un...)
		}
		sortUnavailable(un)
		return livenessResult(un, g.End)
	case "fairness":
		var jumps []QueueJump
		queued, pairs, passed := 0, int64(0), int64(0)
		for _, p := range parts {
			jumps = append(jumps, p.jumps...)
			queued, pairs, passed = queued+p.queued, pairs+p.pairs, passed+p.passed
		}
		return fairnessResult(jumps, queued, pairs, passed)
	}
	c, ok := partedOf(n, opts)
	if !ok {
		panic("checker: " + n + " is not checked key by key")
	}
	var all []any
	for _, p := range parts {
		all = append(all, p.parts[n]...)
	}
	return c.Merge(all)
}

// summarize fills the history's summary g from its keys' parts: the
// stats, the leases that arrived expired, the client-clock anomalies,
// and the lock operations and holds of the keys the nemesis named (with
// the first operation sent too early), for the checks of its plans.
func summarize(g *Input, parts []*keyPart) {
	s := &g.stats
	var gap noGrant
	type clock struct {
		index int32
		a     Anomaly
	}
	var clocks []clock
	g.Holds = map[string][]Hold{}
	for _, p := range parts {
		ps := &p.stats
		s.AcquiresOK, s.AcquiresFail, s.AcquiresInfo = s.AcquiresOK+ps.AcquiresOK, s.AcquiresFail+ps.AcquiresFail, s.AcquiresInfo+ps.AcquiresInfo
		s.ReleasesOK, s.ReleasesFail, s.ReleasesInfo = s.ReleasesOK+ps.ReleasesOK, s.ReleasesFail+ps.ReleasesFail, s.ReleasesInfo+ps.ReleasesInfo
		s.Renewals, s.RenewalsOK, s.Reentries = s.Renewals+ps.Renewals, s.RenewalsOK+ps.RenewalsOK, s.Reentries+ps.Reentries
		gap.merge(p.gap)
		g.ExpiredOnArrival = append(g.ExpiredOnArrival, p.expired...)
		for i, a := range p.clocks {
			clocks = append(clocks, clock{p.dropped[i], a})
		}
		if p.locks != nil {
			g.locks = append(g.locks, p.locks...)
			g.Holds[p.key] = p.held
		} else if p.early != nil {
			g.locks = append(g.locks, *p.early)
		}
	}
	slices.SortFunc(g.locks, func(a, b lockOp) int { return cmp.Compare(a.invIndex, b.invIndex) })
	slices.SortFunc(clocks, func(a, b clock) int { return cmp.Compare(a.index, b.index) })
	for _, c := range clocks {
		g.clocks = append(g.clocks, c.a)
	}
	sort.Strings(g.ExpiredOnArrival)
	s.LongestNoGrantMS, s.LongestNoGrantAt, s.LongestNoGrantOn = gap.d/int64(time.Millisecond), gap.at, gap.key
	s.Faults, s.ExpiredOnArrival = len(g.Faults), len(g.ExpiredOnArrival)
	strikeStats(s, g)
}
