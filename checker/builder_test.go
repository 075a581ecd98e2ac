package checker

import (
	"sort"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
)

// ms is a history time or duration in milliseconds.
func ms(n int64) int64 { return n * int64(time.Millisecond) }

// builder writes histories for tests one operation at a time, with explicit
// invoke and return times; ops() puts them in time order and numbers them.
type builder struct {
	ops []history.Op
}

func newHistory() *builder { return &builder{} }

func (b *builder) add(op history.Op) *builder {
	b.ops = append(b.ops, op)
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

// acquire: an ok acquire with lease time ttl and validity deadline.
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
	ops := append([]history.Op(nil), b.ops...)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Time < ops[j].Time })
	for i := range ops {
		ops[i].Index = i
	}
	return ops
}
