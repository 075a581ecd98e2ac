// Package workloads drives locks the way applications do and records every
// operation in the history.
package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// NewLock opens a lock with its own connections, as a separate process
// would, and a function that closes them. ev records the lock's own work.
type NewLock func(ev locks.Events) (locks.Lock, func(), error)

// Mutex is the plain critical-section workload: Clients clients loop
// acquire, hold for a random time, release, on a small set of keys.
type Mutex struct {
	Clients int
	Keys    []string
	TTL     time.Duration
	HoldMin time.Duration
	HoldMax time.Duration
	// Pause is the longest random wait between a client's operations.
	Pause time.Duration
	Seed  uint64
	Lock  NewLock
	Rec   *history.Recorder

	processes atomic.Int64
}

// Run drives the clients until stop is closed or ctx ends, then lets each
// client finish its operation and release what it holds, so the history
// ends cleanly. Operations run under their own timeouts, never under ctx
// alone, so a cancelled run still records how each one ended.
func (m *Mutex) Run(ctx context.Context, stop <-chan struct{}) error {
	if m.Clients < 1 || len(m.Keys) == 0 || m.HoldMax < m.HoldMin {
		return fmt.Errorf("mutex workload needs clients >= 1, keys, and hold min <= max")
	}
	var wg sync.WaitGroup
	for i := 0; i < m.Clients; i++ {
		c := &client{m: m, process: m.nextProcess(), rng: rand.New(rand.NewPCG(m.Seed, uint64(i))), watchdogs: map[string]int{}}
		l, closeLock, err := m.Lock(c)
		if err != nil {
			return err
		}
		c.lock = l
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer closeLock()
			c.loop(ctx, stop)
		}()
	}
	wg.Wait()
	return nil
}

func (m *Mutex) nextProcess() int { return int(m.processes.Add(1) - 1) }

type client struct {
	m       *Mutex
	lock    locks.Lock
	process int
	rng     *rand.Rand

	// watchdogs gives each lease's renewals a process of their own: they
	// run beside the client's own operations.
	mu        sync.Mutex
	watchdogs map[string]int
}

func (c *client) loop(ctx context.Context, stop <-chan struct{}) {
	done := func() bool {
		select {
		case <-stop:
			return true
		case <-ctx.Done():
			return true
		default:
			return false
		}
	}
	for !done() {
		key := c.m.Keys[c.rng.IntN(len(c.m.Keys))]
		if lease := c.acquire(key); lease != nil {
			// A holder that learns it lost the lock stops at once.
			wait(ctx, stop, lease.Lost, c.between(c.m.HoldMin, c.m.HoldMax))
			c.release(lease)
		}
		wait(ctx, stop, nil, c.between(0, c.m.Pause))
	}
}

func (c *client) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(c.rng.Int64N(int64(hi-lo)))
}

func (c *client) acquire(key string) *locks.Lease {
	rec := c.m.Rec
	rec.Record(history.Op{Type: history.Invoke, Process: c.process, F: history.Acquire, Key: key, TTL: int64(c.m.TTL)})
	lease, err := c.lock.Acquire(context.Background(), key)
	op := history.Op{Process: c.process, F: history.Acquire, Key: key, TTL: int64(c.m.TTL)}
	op.Type, op.Error = outcome(err)
	if err == nil {
		op.Owner, op.Fence, op.Seq, op.Deadline = lease.Token, lease.Fence, lease.Seq, rec.At(lease.Deadline)
	}
	rec.Record(op)
	if op.Type == history.Info {
		c.process = c.m.nextProcess()
	}
	return lease
}

func (c *client) release(l *locks.Lease) {
	rec := c.m.Rec
	rec.Record(history.Op{Type: history.Invoke, Process: c.process, F: history.Release, Key: l.Key, Owner: l.Token})
	err := c.lock.Release(context.Background(), l)
	op := history.Op{Process: c.process, F: history.Release, Key: l.Key, Owner: l.Token}
	op.Type, op.Error = outcome(err)
	rec.Record(op)
	if op.Type == history.Info {
		// The release may still take effect later: a new client goes on.
		c.process = c.m.nextProcess()
	}
}

// outcome classifies a lock call's error: nil is ok, a certain failure is
// fail, anything else leaves the outcome unknown.
func outcome(err error) (history.Type, string) {
	switch {
	case err == nil:
		return history.OK, ""
	case locks.Failed(err):
		return history.Fail, err.Error()
	}
	return history.Info, err.Error()
}

// wait sleeps for d, cut short by stop, lost or ctx.
func wait(ctx context.Context, stop, lost <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-stop:
	case <-lost:
	case <-ctx.Done():
	}
}

// Renewing records a watchdog renewal's invocation.
func (c *client) Renewing(l *locks.Lease) {
	c.mu.Lock()
	p, ok := c.watchdogs[l.Token]
	if !ok {
		p = c.m.nextProcess()
		c.watchdogs[l.Token] = p
	}
	c.mu.Unlock()
	c.m.Rec.Record(history.Op{Type: history.Invoke, Process: p, F: history.Renew, Key: l.Key, Owner: l.Token, TTL: int64(l.TTL)})
}

// Renewed records how a renewal ended.
func (c *client) Renewed(l *locks.Lease, err error) {
	c.mu.Lock()
	p := c.watchdogs[l.Token]
	c.mu.Unlock()
	op := history.Op{Process: p, F: history.Renew, Key: l.Key, Owner: l.Token, TTL: int64(l.TTL)}
	op.Type, op.Error = outcome(err)
	switch op.Type {
	case history.OK:
		op.Deadline = c.m.Rec.At(l.Deadline)
	case history.Info:
		c.mu.Lock()
		c.watchdogs[l.Token] = c.m.nextProcess()
		c.mu.Unlock()
	}
	c.m.Rec.Record(op)
}
