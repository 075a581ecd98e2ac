// Package historytest generates lock histories for tests and benchmarks:
// clients taking, holding and releasing leases on a simulated lease server,
// recorded as the harness records them, with double holds planted where
// asked. Without plants every history it makes is legal, so a checker that
// flags one is wrong; with plants, a checker that misses one is wrong.
package historytest

import (
	"bufio"
	"container/heap"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
)

// Config shapes a generated history. Zero fields take the defaults below.
type Config struct {
	Seed    uint64
	Keys    int // lock keys "k0", "k1", ...; default 1
	Clients int // concurrent clients; default 5
	// Ops is how many history lines to make, at least (a history runs on
	// until every planted double hold has happened); default 1000.
	Ops int
	// TTL is the lease time; default 30ms.
	TTL time.Duration
	// MinHold and MaxHold bound how long a client works under a lease
	// before it releases it; defaults 100us and 3ms.
	MinHold, MaxHold time.Duration
	// Latency bounds each of the two legs of an operation: from its
	// invocation to its effect on the server, and from there to its
	// completion; default 300us.
	Latency time.Duration
	// Think bounds the pause between a client's operations; default 500us.
	Think time.Duration
	// Overstay is the fraction of holds that outlast the TTL without a
	// renewal, so that the server lets the lease expire and hands the key
	// on (a legal handoff; the late release fails).
	Overstay float64
	// Renew is the fraction of leases a watchdog renews every TTL/3 while
	// their client works, on a process of its own, stamped by the client
	// and reported up to a millisecond late, as real runs record them.
	Renew float64
	// Info is the fraction of operations whose outcome the client never
	// learns (recorded info; the client moves on as a new process). Half of
	// them took effect on the server, half never did.
	Info float64
	// DoubleHolds is how many double holds to plant: the server grants a
	// key whose lease is still valid, at a moment when both clients'
	// holding windows overlap. They are spread over the history.
	DoubleHolds int
	// PlantedHold, when set, is how long the victim of each planted double
	// hold works under its lease (try under 200us).
	PlantedHold time.Duration
}

func (c Config) withDefaults() Config {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	c.Keys, c.Clients, c.Ops = max(c.Keys, 1), orInt(c.Clients, 5), orInt(c.Ops, 1000)
	def(&c.TTL, 30*time.Millisecond)
	def(&c.MinHold, 100*time.Microsecond)
	def(&c.MaxHold, 3*time.Millisecond)
	def(&c.Latency, 300*time.Microsecond)
	def(&c.Think, 500*time.Microsecond)
	c.MaxHold = max(c.MaxHold, c.MinHold)
	return c
}

func orInt(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}

// Planted is one planted double hold: Thief was granted Key while Victim's
// lease was valid on the server, and both clients held it from At on.
type Planted struct {
	Key    string
	Victim string // lease ids
	Thief  string
	At     int64
}

// History is a generated history and what was planted in it.
type History struct {
	Ops     []history.Op
	Planted []Planted
}

// Generate simulates the clients and the server and returns the history
// in the order the harness would have recorded it.
func Generate(c Config) History {
	var ops []history.Op
	planted := Stream(c, func(op history.Op) error {
		ops = append(ops, op)
		return nil
	})
	return History{Ops: ops, Planted: planted}
}

// Stream is Generate for histories too long to hold: it hands each
// operation to emit as soon as no later one can come before it, and
// returns what was planted. It stops at emit's first error, which it
// leaves for emit's caller to keep.
func Stream(c Config, emit func(history.Op) error) []Planted {
	s := newSim(c.withDefaults())
	s.emit = emit
	s.run()
	s.flush(never)
	return s.planted
}

// never is later than any event.
const never = int64(^uint64(0) >> 1)

type evKind int

const (
	evInvoke evKind = iota // a client (or a watchdog) starts its next operation
	evApply                // the server applies it
	evReturn               // its completion reaches the harness
)

type event struct {
	at   int64
	seq  int
	kind evKind
	a    *actor
}

type events []event

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	if e[i].at != e[j].at {
		return e[i].at < e[j].at
	}
	return e[i].seq < e[j].seq
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)   { *e = append(*e, x.(event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// actor is a client, or the watchdog of one lease.
type actor struct {
	process  int
	watchdog *grant // the lease this actor renews; nil for a client
	grants   int
	held     *grant // the lease a client works under
	op       *pending
	lastRec  int64 // when the harness recorded this actor's last report
}

// grant is one lease as its client knows it.
type grant struct {
	key, lease, owner string
	okAt              int64 // when the acquire's ok will return
	retAt             int64 // the acquire's ok, once it returned
	windowEnd         int64 // last acquire or renewal invocation + TTL
	releaseAt         int64 // when its client will invoke the release
	released          bool  // the release was invoked
	victim            bool  // designated to be stolen from
}

type pending struct {
	inv     history.Op
	info    bool // the outcome never reaches the client
	applies bool // false: the server never sees it
	result  history.Type
	refused bool
}

// serverLease is what the server holds for a key. A planted theft keeps
// the victim's lease underneath, and the server reinstates it when the
// thief's goes, so one plant makes one double hold rather than a cascade
// of grants over a victim that still holds.
type serverLease struct {
	owner  string
	expiry int64
	g      *grant
	under  *serverLease
}

// current is the lease that holds key at now, if any.
func (s *sim) current(key string, now int64) (serverLease, bool) {
	for l, ok := s.server[key]; ok; {
		if l.expiry > now {
			return l, true
		}
		if l.under == nil {
			break
		}
		l = *l.under
	}
	return serverLease{}, false
}

type recorded struct {
	at  int64 // when the harness recorded it
	seq int
	op  history.Op
}

type sim struct {
	c   Config
	rng *rand.Rand
	q   events
	seq int
	// rec are the recorded operations not yet emitted, in the order the
	// harness recorded them; count is how many were recorded in all.
	rec      recordings
	count    int
	emitted  int
	emit     func(history.Op) error
	stopped  bool
	server   map[string]serverLease
	nextProc int
	planted  []Planted
	// victim is the designated victim per key while a plant is due.
	victim map[string]*grant
	// lastPlant is when the last planted double hold began.
	lastPlant int64
}

func newSim(c Config) *sim {
	return &sim{c: c, rng: rand.New(rand.NewPCG(c.Seed, c.Seed^0x9e3779b97f4a7c15)),
		server: map[string]serverLease{}, victim: map[string]*grant{}}
}

func (s *sim) schedule(at int64, k evKind, a *actor) {
	s.seq++
	heap.Push(&s.q, event{at: at, seq: s.seq, kind: k, a: a})
}

func (s *sim) record(at int64, op history.Op) {
	s.seq++
	s.count++
	heap.Push(&s.rec, recorded{at: at, seq: s.seq, op: op})
}

// flush emits, numbered, the recorded operations from before t: every
// event from t on records at t or later (a watchdog's report late).
func (s *sim) flush(t int64) {
	for s.rec.Len() > 0 && s.rec[0].at < t && !s.stopped {
		r := heap.Pop(&s.rec).(recorded)
		r.op.Index = s.emitted
		s.emitted++
		if err := s.emit(r.op); err != nil {
			s.stopped = true
		}
	}
}

// recordings is a heap of recorded operations, by record time then order.
type recordings []recorded

func (e recordings) Len() int { return len(e) }
func (e recordings) Less(i, j int) bool {
	if e[i].at != e[j].at {
		return e[i].at < e[j].at
	}
	return e[i].seq < e[j].seq
}
func (e recordings) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *recordings) Push(x any)   { *e = append(*e, x.(recorded)) }
func (e *recordings) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// upTo is a random duration in [1ns, d].
func (s *sim) upTo(d time.Duration) int64 { return 1 + s.rng.Int64N(int64(d)) }

func (s *sim) between(lo, hi time.Duration) int64 {
	return int64(lo) + s.rng.Int64N(int64(hi-lo)+1)
}

// plantDue reports whether the next planted double hold is due: plants are
// spread evenly over the history's length.
func (s *sim) plantDue() bool {
	n := len(s.planted)
	return n < s.c.DoubleHolds && s.count >= (n+1)*s.c.Ops/(s.c.DoubleHolds+1)
}

func (s *sim) run() {
	for i := 0; i < s.c.Clients; i++ {
		s.schedule(s.upTo(s.c.Think), evInvoke, &actor{process: s.nextProc})
		s.nextProc++
	}
	for s.q.Len() > 0 && !s.stopped {
		ev := heap.Pop(&s.q).(event)
		if s.count >= s.c.Ops && len(s.planted) >= s.c.DoubleHolds && ev.at > s.lastPlant {
			break // the last plant's oks are recorded, and both clients hold
		}
		s.flush(ev.at)
		switch ev.kind {
		case evInvoke:
			s.invoke(ev.a, ev.at)
		case evApply:
			s.apply(ev.a, ev.at)
		case evReturn:
			s.complete(ev.a, ev.at)
		}
	}
}

// invoke starts an actor's next operation: a client acquires when it holds
// nothing and releases when its work is done; a watchdog renews while its
// client still works.
func (s *sim) invoke(a *actor, now int64) {
	op := history.Op{Time: now, Type: history.Invoke, Process: a.process}
	switch g := a.held; {
	case a.watchdog != nil:
		g = a.watchdog
		if g.released || now >= g.releaseAt {
			return // the client is done with it: the watchdog stops
		}
		op.F, op.Key, op.Lease, op.Owner, op.TTL, op.Stamp = history.Renew, g.key, g.lease, g.owner, int64(s.c.TTL), history.StampClient
	case g == nil:
		a.grants++
		op.F, op.Key, op.TTL = history.Acquire, fmt.Sprintf("k%d", s.rng.IntN(s.c.Keys)), int64(s.c.TTL)
		op.Lease = fmt.Sprintf("p%d.%d", a.process, a.grants)
	default:
		g.released = true
		op.F, op.Key, op.Lease, op.Owner = history.Release, g.key, g.lease, g.owner
	}
	p := &pending{inv: op, applies: true}
	if s.c.Info > 0 && s.rng.Float64() < s.c.Info {
		p.info, p.applies = true, s.rng.IntN(2) == 0
	}
	a.op = p
	s.recordStamped(a, op, now)
	s.schedule(now+s.upTo(s.c.Latency), evApply, a)
}

// recordStamped records op; a watchdog's report reaches the harness up to
// a millisecond late.
func (s *sim) recordStamped(a *actor, op history.Op, now int64) {
	at := now
	if a.watchdog != nil {
		at = max(at+s.rng.Int64N(int64(time.Millisecond)), a.lastRec)
	}
	a.lastRec = at
	s.record(at, op)
}

// apply runs the operation on the server and schedules its completion.
func (s *sim) apply(a *actor, now int64) {
	p, inv := a.op, a.op.inv
	ret := now + s.upTo(s.c.Latency)
	cur, held := s.current(inv.Key, now)
	switch {
	case !p.applies:
		p.result = history.Info
	case inv.F == history.Acquire:
		v := s.victim[inv.Key]
		switch {
		case !held:
			p.result = history.OK
			delete(s.victim, inv.Key) // a designated victim whose lease ran out
		case v != nil && cur.g == v && !p.info && s.plantDue() && s.stealable(v, now):
			// The planted double hold: grant while v's lease is valid, and
			// return before v's client stops counting on it.
			p.result = history.OK
			ret = s.stealReturn(v, now)
			s.planted = append(s.planted, Planted{Key: inv.Key, Victim: v.lease, Thief: inv.Lease, At: max(ret, v.okAt)})
			s.lastPlant = max(ret, v.okAt)
			delete(s.victim, inv.Key)
		default:
			p.result, p.refused = history.Fail, true
		}
		if p.result == history.OK {
			g := &grant{key: inv.Key, lease: inv.Lease, owner: fmt.Sprintf("%016x", s.rng.Uint64()),
				okAt: ret, windowEnd: inv.Time + inv.TTL}
			if !held && s.plantDue() && !p.info {
				g.victim = true
				s.victim[inv.Key] = g
			}
			l := serverLease{owner: g.owner, expiry: now + inv.TTL, g: g}
			if held {
				l.under = &cur
			}
			s.server[inv.Key] = l
			a.held = g
		}
	case inv.F == history.Release:
		switch {
		case held && cur.owner == inv.Owner:
			delete(s.server, inv.Key)
			if cur.under != nil {
				s.server[inv.Key] = *cur.under
			}
			p.result = history.OK
		case held && cur.under != nil && cur.under.owner == inv.Owner:
			// A victim's release finds the thief's token: "not ours"; its
			// lease is not reinstated later.
			cur.under = cur.under.under
			s.server[inv.Key] = cur
			p.result = history.Fail
		default:
			p.result = history.Fail
		}
		if g := cur.g; g != nil && g == s.victim[inv.Key] && g.lease == inv.Lease {
			delete(s.victim, inv.Key) // no longer stealable; the next grant may be designated
		}
	case inv.F == history.Renew:
		if held && cur.owner == inv.Owner {
			cur.expiry = now + inv.TTL
			s.server[inv.Key] = cur
			p.result = history.OK
		} else {
			p.result = history.Fail
		}
	}
	if p.info {
		p.result = history.Info
	}
	s.schedule(ret, evReturn, a)
}

// stealable: a grant now can return while v's holding window is open.
func (s *sim) stealable(v *grant, now int64) bool {
	if v.retAt == 0 {
		return true // v's client has not heard yet: return right after it does
	}
	return !v.released && now+1 < min(v.releaseAt, v.windowEnd)
}

// stealReturn is when the thief's ok returns: inside the victim's window,
// or right after the victim's own ok when that is still on its way (the
// victim then works at least 2ns, so the windows overlap).
func (s *sim) stealReturn(v *grant, now int64) int64 {
	if v.retAt == 0 {
		return max(v.okAt, now) + 1
	}
	end := min(v.releaseAt, v.windowEnd)
	return now + 1 + s.rng.Int64N(max((end-now-1)/2, 1))
}

// complete records the outcome and moves the actor on.
func (s *sim) complete(a *actor, now int64) {
	p := a.op
	a.op = nil
	inv := p.inv
	done := history.Op{Time: now, Stamp: inv.Stamp, Type: p.result, Process: a.process, F: inv.F, Key: inv.Key, Lease: inv.Lease}
	switch {
	case inv.F == history.Acquire && p.result == history.OK:
		g := a.held
		done.Owner, done.TTL, done.Deadline = g.owner, inv.TTL, inv.Time+inv.TTL
		g.retAt = now
		s.startWork(a, g, now)
	case inv.F == history.Acquire:
		done.TTL, done.Refused = inv.TTL, p.refused && p.result == history.Fail
	case inv.F == history.Renew && p.result == history.OK:
		g := a.watchdog
		done.Owner, done.TTL, done.Deadline = g.owner, inv.TTL, inv.Time+inv.TTL
		g.windowEnd = max(g.windowEnd, inv.Time+inv.TTL)
	case inv.F == history.Release:
		a.held = nil
	}
	s.recordStamped(a, done, now)
	switch {
	case a.watchdog != nil:
		if p.result == history.OK {
			s.schedule(now+int64(s.c.TTL)/3, evInvoke, a)
		}
		return
	case p.result == history.Info:
		// An unknown outcome: carry on as a new client (an info acquire
		// may have taken effect; its lease is nobody's now).
		a.process, a.grants, a.held = s.nextProc, 0, nil
		s.nextProc++
	case a.held != nil:
		return // working under the lease; startWork scheduled the release
	}
	s.schedule(now+s.upTo(s.c.Think), evInvoke, a)
}

// startWork picks how long the client works under g and schedules its
// release and maybe a watchdog.
func (s *sim) startWork(a *actor, g *grant, now int64) {
	hold := s.between(s.c.MinHold, s.c.MaxHold)
	if g.victim {
		hold = max(hold, 2)
	}
	renew := s.c.Renew > 0 && s.rng.Float64() < s.c.Renew
	switch {
	case g.victim && s.c.PlantedHold > 0:
		hold, renew = max(int64(s.c.PlantedHold), 2), false
	case renew:
		hold = s.between(s.c.TTL/2, 2*s.c.TTL)
	case s.c.Overstay > 0 && s.rng.Float64() < s.c.Overstay:
		hold = s.between(s.c.TTL, 2*s.c.TTL)
	}
	g.releaseAt = now + hold
	s.schedule(g.releaseAt, evInvoke, a)
	if renew {
		wd := &actor{process: s.nextProc, watchdog: g}
		s.nextProc++
		s.schedule(now+int64(s.c.TTL)/3, evInvoke, wd)
	}
}

// WriteJSONL writes ops as history.jsonl, one JSON object a line.
func WriteJSONL(w io.Writer, ops []history.Op) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	for _, op := range ops {
		if err := enc.Encode(op); err != nil {
			return err
		}
	}
	return bw.Flush()
}
