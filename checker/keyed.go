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

	// parts are the checkers' parts, by checker, in window order.
	parts map[string][]any
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
			closed := newLeaseSet() // each bucket's, emptied for the next: its bits are many
			for i := range next {
				closed.empty()
				run := &windowRun{g: g, checkers: partedCheckers(names, opts), closed: closed}
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
	for i, c := range partedCheckers(names, opts) {
		var all []any
		for _, p := range parts {
			all = append(all, p.parts[c.name]...)
		}
		results[i] = c.Merge(g, all)
		results[i].Checker = c.name
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
	// whole are the keys to check whole; abandoned what their windows
	// left each checker.
	whole := map[uint32]bool{}
	abandoned := map[string]map[string]any{}
	for id, kw := range keys {
		if p := kw.finish(); p != nil {
			parts = append(parts, p)
		} else {
			whole[id], abandoned[kw.key] = true, kw.carry
			if !kw.named {
				windowCounts.redone.Add(1)
			}
		}
		delete(keys, id) // its windows are done with
	}
	if len(whole) == 0 {
		return parts, nil
	}
	byKey, err := sp.loadKeys(i, func(id uint32) bool { return whole[id] })
	for k, locks := range byKey {
		parts = append(parts, checkKey1(run.g, k, locks, named[k], run.checkers, abandoned[k]))
		delete(byKey, k)
	}
	return parts, err
}

// checkKey1 checks one key's lock operations, in invocation order;
// abandoned is what each checker's windows of the key left, if it was
// cut in windows before.
func checkKey1(g *Input, key string, locks []lockOp, named bool, checkers []namedParted, abandoned map[string]any) *keyPart {
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
	p.early = earlyOp(in.Phases, in.locks)
	if named {
		p.locks, p.held = in.locks, in.Holds[key]
	}
	for _, c := range checkers {
		part, _ := c.Part(in, PartAt{Key: key, Last: true, Abandoned: abandoned[c.name]})
		p.addPart(c.name, part)
	}
	return p
}

func (p *keyPart) addPart(name string, part any) {
	if p.parts == nil {
		p.parts = map[string][]any{}
	}
	p.parts[name] = append(p.parts[name], part)
}

// namedParted is a chosen checker, all of which are Parted when a
// history is checked key by key (CheckReader).
type namedParted struct {
	name string
	Parted
}

// partedCheckers builds the checkers names, in order.
func partedCheckers(names []string, opts Options) []namedParted {
	cs := make([]namedParted, len(names))
	for i, n := range names {
		c, ok := partedOf(n, opts)
		if !ok {
			panic("checker: " + n + " is not checked key by key") // CheckReader chose to stream
		}
		cs[i] = namedParted{n, c}
	}
	return cs
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
