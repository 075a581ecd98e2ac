package checker

import (
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

// ms is a history time or duration in milliseconds.
func ms(n int64) int64 { return n * int64(time.Millisecond) }

// builder writes histories for tests one operation at a time, with explicit
// invoke and return times; build() numbers them in the order they reached
// the history: time order, save for late reports (reportedAt).
type builder struct {
	ops []history.Op
	// recorded is when each op reached the history: its time, unless a
	// client-stamped report arrived later (see reportedAt).
	recorded []int64
}

func newHistory() *builder { return &builder{} }

// add appends op; a lock op without a lease id takes its owner as one, as
// tests name each lease once (use as to give a token apart from the lease).
func (b *builder) add(op history.Op) *builder {
	if op.F.IsLock() && op.Lease == "" {
		op.Lease = op.Owner
	}
	b.ops = append(b.ops, op)
	b.recorded = append(b.recorded, op.Time)
	return b
}

// reportedAt records the last operation (invocation and completion) when
// its report arrived at t, as for a client-stamped renewal: its ops then
// follow, in index order, operations that happened after it.
func (b *builder) reportedAt(t int64) *builder {
	n := len(b.ops) - 1
	b.recorded[n], b.ops[n].Stamp = t, history.StampClient
	if n > 0 && b.ops[n].Type.Completes() && b.ops[n-1].Type == history.Invoke && b.ops[n-1].Process == b.ops[n].Process {
		// Times the client stamped, as a history records such an event:
		// out of time order, which only stamped events may be.
		b.recorded[n-1], b.ops[n-1].Stamp = t, history.StampClient
	}
	return b
}

// call records an invocation and its completion (skipped when done is
// history.Invoke, for an operation the history never completed).
func (b *builder) call(inv history.Op, done history.Type, ret int64, fill func(*history.Op)) *builder {
	inv.Type = history.Invoke
	b.add(inv)
	if done == history.Invoke {
		return b
	}
	c := inv
	c.Type, c.Time = done, ret
	if fill != nil {
		fill(&c)
	}
	return b.add(c)
}

// acquire: an ok acquire of lease owner with lease time ttl and the
// validity deadline the lock claims (recorded, never trusted).
func (b *builder) acquire(p int, key, owner string, inv, ret, ttl, deadline int64) *builder {
	return b.call(history.Op{Time: inv, Process: p, F: history.Acquire, Key: key, Owner: owner, TTL: ttl}, history.OK, ret,
		func(c *history.Op) { c.Deadline = deadline })
}

// acquireFenced is acquire with a fencing token.
func (b *builder) acquireFenced(p int, key, owner string, fence, inv, ret, ttl, deadline int64) *builder {
	return b.call(history.Op{Time: inv, Process: p, F: history.Acquire, Key: key, Owner: owner, TTL: ttl}, history.OK, ret,
		func(c *history.Op) { c.Deadline, c.Fence = deadline, fence })
}

// acquireAs records an acquire that ended with t (fail or info), or never
// ended when t is history.Invoke.
func (b *builder) acquireAs(t history.Type, p int, key, owner string, inv, ret, ttl int64) *builder {
	return b.call(history.Op{Time: inv, Process: p, F: history.Acquire, Key: key, Owner: owner, TTL: ttl}, t, ret, nil)
}

func (b *builder) release(t history.Type, p int, key, owner string, inv, ret int64) *builder {
	return b.call(history.Op{Time: inv, Process: p, F: history.Release, Key: key, Owner: owner}, t, ret, nil)
}

// renew: an ok renewal that moves the lease's deadline.
func (b *builder) renew(p int, key, owner string, inv, ret, ttl, deadline int64) *builder {
	return b.call(history.Op{Time: inv, Process: p, F: history.Renew, Key: key, Owner: owner, TTL: ttl}, history.OK, ret,
		func(c *history.Op) { c.Deadline = deadline })
}

// renewVia: a renewal the holder asked for (history.ViaExtend,
// ViaReacquire; "" for the lock's watchdog) that ended t.
func (b *builder) renewVia(via string, t history.Type, p int, key, owner string, inv, ret, ttl int64) *builder {
	return b.call(history.Op{Time: inv, Process: p, F: history.Renew, Key: key, Owner: owner, TTL: ttl, Via: via}, t, ret, nil)
}

// stamped gives the last completion the client's stamps of when it began
// and ended the call.
func (b *builder) stamped(began, ended int64) *builder {
	c := &b.ops[len(b.ops)-1]
	c.Began, c.Ended = began, ended
	return b
}

// triedAt marks the last op (an ok acquire) as one whose granting try
// began at tried, by the client's stamps began and ended.
func (b *builder) triedAt(began, tried, ended int64) *builder {
	c := &b.ops[len(b.ops)-1]
	c.Began, c.Tried, c.Ended = began, tried, ended
	return b
}

// refusedRenewal: a renewal (via; "" for the watchdog) the lock refused:
// the lease was no longer the holder's.
func (b *builder) refusedRenewal(via string, p int, key, owner string, inv, ret, ttl int64) *builder {
	b.renewVia(via, history.Fail, p, key, owner, inv, ret, ttl)
	b.ops[len(b.ops)-1].Refused = true
	return b
}

// inspect: the harness's read of key after lease's refused acquire that
// tried token, at t; heldOn names the nodes that held the token ("": none).
func (b *builder) inspect(key, lease, token string, t int64, heldOn string) *builder {
	return b.call(history.Op{Time: t, Process: history.HarnessProcess, F: history.Inspect, Key: key, Lease: lease, Owner: token}, history.OK, t+ms(1),
		func(c *history.Op) {
			c.Owner, c.Node = "", ""
			if heldOn != "" {
				c.Owner, c.Node = token, heldOn
			}
		})
}

// lost: the lock told the holder the lease is gone, at t.
func (b *builder) lost(p int, key, owner string, t int64) *builder {
	return b.call(history.Op{Time: t, Process: p, F: history.Lost, Key: key, Owner: owner}, history.OK, t, nil)
}

// faultOn records a fault as fault does, with the target it struck
// (client:1, link:0:redis-1, node:redis-3).
func (b *builder) faultOn(name, target string, start, end int64) *builder {
	n := len(b.ops)
	b.fault(name, target, start, end)
	for i := n; i < len(b.ops); i++ {
		b.ops[i].Target = target
	}
	return b
}

// faultDoing records a fault that declares effects (one registered from
// outside deadbolt, say), on target from start to end.
func (b *builder) faultDoing(name, target string, e history.Effects, start, end int64) *builder {
	n := len(b.ops)
	b.faultOn(name, target, start, end)
	b.ops[n].Effects = &e
	return b
}

// fault records a fault on node from start to end; end < 0 leaves it unhealed.
func (b *builder) fault(name, node string, start, end int64) *builder {
	op := history.Op{Process: history.NemesisProcess, Fault: name, Node: node}
	s := op
	s.F, s.Time = history.FaultStart, start
	b.call(s, history.OK, start, nil)
	if end >= 0 {
		e := op
		e.F, e.Time = history.FaultEnd, end
		b.call(e, history.OK, end, nil)
	}
	return b
}

func (b *builder) build() []history.Op {
	order := make([]int, len(b.ops))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return b.recorded[order[i]] < b.recorded[order[j]] })
	ops := make([]history.Op, len(b.ops))
	for i, o := range order {
		ops[i] = b.ops[o]
		ops[i].Index = i
	}
	handMade.Lock()
	handMade.ops = append(handMade.ops, ops)
	handMade.Unlock()
	return ops
}

// next makes the last operation's completion (an info) name process p as
// the client's successor, which may release or use its leases.
func (b *builder) next(p int) *builder {
	b.ops[len(b.ops)-1].Next = p
	return b
}

// token makes the last acquire's lock token tok, whatever its lease id: a
// lock may report any token it likes.
func (b *builder) token(tok string) *builder {
	for i := len(b.ops) - 1; i >= 0; i-- {
		if b.ops[i].F == history.Acquire {
			b.ops[i].Owner = tok
			if b.ops[i].Type == history.Invoke {
				break
			}
		}
	}
	return b
}

// refused: an acquire refused because the key was taken.
func (b *builder) refused(p int, key, lease string, inv, ret, ttl int64) *builder {
	return b.call(history.Op{Time: inv, Process: p, F: history.Acquire, Key: key, Lease: lease, TTL: ttl}, history.Fail, ret,
		func(c *history.Op) { c.Refused = true })
}

// read: a client's ok read of value under lease.
func (b *builder) read(p int, key, lease string, value, inv, ret int64) *builder {
	return b.call(history.Op{Time: inv, Process: p, F: history.Read, Key: key, Lease: lease}, history.OK, ret,
		func(c *history.Op) { c.Value = history.Int(value) })
}

// write: a client's write of value under lease, ending t; an ok one
// replaced prev.
func (b *builder) write(t history.Type, p int, key, lease string, value, prev, inv, ret int64) *builder {
	return b.call(history.Op{Time: inv, Process: p, F: history.Write, Key: key, Lease: lease, Value: history.Int(value)}, t, ret,
		func(c *history.Op) {
			c.Value = nil
			if t == history.OK {
				c.Prev = history.Int(prev)
			}
		})
}

// fencedRead and fencedWrite carry the lease's fencing token, as the
// fenced workload sends it.
func (b *builder) fencedRead(p int, key, lease string, fence, value, inv, ret int64) *builder {
	return b.call(history.Op{Time: inv, Process: p, F: history.Read, Key: key, Lease: lease, Fence: fence}, history.OK, ret,
		func(c *history.Op) { c.Value = history.Int(value) })
}

func (b *builder) fencedWrite(t history.Type, p int, key, lease string, fence, value, prev, inv, ret int64) *builder {
	b.write(t, p, key, lease, value, prev, inv, ret)
	for i := len(b.ops) - 1; i >= 0; i-- {
		if b.ops[i].Type == history.Invoke {
			b.ops[i].Fence = fence
			break
		}
	}
	return b
}

// increment: a read of v then an ok write of v+1 over prev, under lease.
func (b *builder) increment(p int, key, lease string, v, prev, inv, ret int64) *builder {
	return b.read(p, key, lease, v, inv, inv+ms(1)).write(history.OK, p, key, lease, v+1, prev, inv+ms(2), ret)
}

// setup and final: the harness's own write and read of a resource key.
func (b *builder) setup(key string, value, t int64) *builder {
	return b.call(history.Op{Time: t, Process: history.HarnessProcess, F: history.Write, Key: key, Value: history.Int(value)}, history.OK, t, nil)
}

func (b *builder) final(key string, value, t int64) *builder {
	return b.call(history.Op{Time: t, Process: history.HarnessProcess, F: history.Read, Key: key}, history.OK, t,
		func(c *history.Op) { c.Value = history.Int(value) })
}

// order: a purchase for the user of key under lease.
func (b *builder) order(t history.Type, p int, key, lease string, inv, ret int64) *builder {
	return b.call(history.Op{Time: inv, Process: p, F: history.Order, Key: key, Lease: lease}, t, ret, nil)
}

func run(t *testing.T, name string, ops []history.Op) Result {
	t.Helper()
	in, err := NewInput(ops)
	require.NoError(t, err)
	return registry[name].build(Options{}).Check(in)
}
