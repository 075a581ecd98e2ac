package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Pool hands clusters to the runs of a suite and takes them back, so that
// a run of a topology some earlier run has used gets that run's cluster,
// reset (reset.go), instead of new containers and networks. A cluster is
// kept only for a spec some later Get will ask for, only when its run
// ended healthy, and only while its reset makes it compare equal to its
// fresh self; anything else is removed and the next run starts fresh.
// A nil *Pool starts every cluster fresh and removes it after its run.
type Pool struct {
	mu     sync.Mutex
	want   map[string]int // Gets still to come, by spec
	parked map[string][]*pooled
	out    map[*Cluster]*pooled
	// starting counts the fresh clusters being started, by spec.
	starting map[string]int
	closed   bool
}

type pooled struct {
	key   string
	c     *Cluster
	fresh Snapshot
}

// Origin says where a cluster came from.
type Origin struct {
	// Reused: a parked cluster, reset.
	Reused bool
	// Fallback is why a parked cluster could not be reset and was
	// replaced by a fresh one ("" when none was).
	Fallback string
	// Setup is how long the Get took.
	Setup time.Duration
}

// resetTimeout bounds a reset: past it a fresh start is faster.
const resetTimeout = 90 * time.Second

// NewPool makes a pool for the runs to come, one spec per run.
func NewPool(runs []Spec) *Pool {
	p := &Pool{want: map[string]int{}, parked: map[string][]*pooled{}, out: map[*Cluster]*pooled{}, starting: map[string]int{}}
	for _, s := range runs {
		p.want[poolKey(s)]++
	}
	return p
}

// poolKey is the whole normalized spec, so that a field added to Spec
// tells clusters apart without this file knowing it.
func poolKey(s Spec) string {
	b, err := json.Marshal(s.Defaults())
	if err != nil {
		panic("cluster: a Spec that does not marshal: " + err.Error())
	}
	return string(b)
}

// Get returns a cluster for spec: a parked one, reset, else a fresh one.
func (p *Pool) Get(ctx context.Context, spec Spec) (*Cluster, Origin, error) {
	start := time.Now()
	if p == nil {
		c, err := Start(ctx, spec)
		return c, Origin{Setup: time.Since(start)}, err
	}
	key := poolKey(spec)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, Origin{}, errors.New("the cluster pool is closed")
	}
	p.want[key]--
	var e *pooled
	if q := p.parked[key]; len(q) > 0 {
		e, p.parked[key] = q[len(q)-1], q[:len(q)-1]
	}
	p.mu.Unlock()
	var o Origin
	if e != nil {
		rctx, cancel := context.WithTimeout(ctx, resetTimeout)
		err := e.c.reset(rctx, e.fresh)
		cancel()
		if err == nil {
			p.lend(e)
			return e.c, Origin{Reused: true, Setup: time.Since(start)}, nil
		}
		o.Fallback = err.Error()
		if cerr := e.c.Close(context.WithoutCancel(ctx)); cerr != nil {
			return nil, o, errors.Join(fmt.Errorf("reset failed: %w", err), cerr)
		}
	}
	p.mu.Lock()
	p.starting[key]++
	p.mu.Unlock()
	c, err := Start(ctx, spec)
	p.mu.Lock()
	p.starting[key]--
	p.mu.Unlock()
	o.Setup = time.Since(start)
	if err != nil || !spec.Poolable() {
		return c, o, err
	}
	// What the cluster looks like fresh is what its resets must restore.
	if fresh, err := c.Snapshot(ctx); err == nil {
		p.lend(&pooled{key: key, c: c, fresh: fresh})
	}
	return c, o, nil
}

// Want tells the pool of n more runs of spec to come, beyond those it was
// made for (a shrink's trials): a cluster of spec is then kept for them.
func (p *Pool) Want(spec Spec, n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.want[poolKey(spec)] += n
}

// Parked reports whether a cluster of spec waits in the pool: a run of
// spec started now is lent it, reset, instead of new containers.
func (p *Pool) Parked(spec Spec) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.parked[poolKey(spec)]) > 0
}

// Lent reports whether a run holds a cluster of spec, or is being given
// a new one, that the pool may park when it comes back.
func (p *Pool) Lent(spec Spec) bool {
	if p == nil || !spec.Poolable() {
		return false
	}
	key := poolKey(spec)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.starting[key] > 0 {
		return true
	}
	for _, e := range p.out {
		if e.key == key {
			return true
		}
	}
	return false
}

func (p *Pool) lend(e *pooled) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out[e.c] = e
}

// Put takes a cluster back after its run; keep says the run ended with
// the cluster healthy. It is parked if a later Get will want it, else
// removed.
func (p *Pool) Put(ctx context.Context, c *Cluster, keep bool) error {
	if c == nil {
		return nil
	}
	if p != nil {
		p.mu.Lock()
		e := p.out[c]
		delete(p.out, c)
		if e != nil && keep && !p.closed && p.want[e.key] > len(p.parked[e.key]) {
			p.parked[e.key] = append(p.parked[e.key], e)
			p.mu.Unlock()
			return nil
		}
		p.mu.Unlock()
	}
	return c.Close(context.WithoutCancel(ctx))
}

// Close removes every parked cluster; clusters still out are removed when
// they are put back. Safe to call more than once.
func (p *Pool) Close(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	p.closed = true
	var all []*pooled
	for _, q := range p.parked {
		all = append(all, q...)
	}
	p.parked = map[string][]*pooled{}
	p.mu.Unlock()
	var errs []error
	for _, e := range all {
		errs = append(errs, e.c.Close(context.WithoutCancel(ctx)))
	}
	return errors.Join(errs...)
}
