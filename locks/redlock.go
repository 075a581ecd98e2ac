package locks

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/endpoints"
)

func init() {
	Register("redlock", "RedLock: SET NX PX on N independent masters in parallel, quorum N/2+1, validity TTL - elapsed - drift", NewRedlock)
	InDebate("redlock", 7)
}

// Redlock is antirez's algorithm over independent masters.
type Redlock struct {
	nodes  []redis.UniversalClient
	quorum int
	o      Options
	// nodeTimeout bounds each node's SET, far below the TTL, so that a dead
	// node cannot eat the validity.
	nodeTimeout time.Duration
}

// NewRedlock builds RedLock over one client per independent master.
func NewRedlock(e endpoints.Endpoints, o Options) (Lock, error) {
	if e.Groups() < 1 {
		return nil, fmt.Errorf("lock redlock needs at least one master")
	}
	if err := IndependentMasters("redlock", e); err != nil {
		return nil, err
	}
	o = o.WithDefaults()
	clients, err := o.Clients(e)
	if err != nil {
		return nil, err
	}
	nt := min(o.TTL/20, o.Timeout)
	return &Redlock{nodes: clients, quorum: len(clients)/2 + 1, o: o, nodeTimeout: nt}, nil
}

// Close closes the lock's connections.
func (r *Redlock) Close() error { return closeAll(r.nodes...) }

func (r *Redlock) Acquire(ctx context.Context, key string) (*Lease, error) {
	return r.o.Retry(ctx, func() (*Lease, error) { return r.try(ctx, key) })
}

func (r *Redlock) try(ctx context.Context, key string) (*Lease, error) {
	token := newToken()
	start := time.Now()
	got, errs := r.onAll(ctx, r.nodeTimeout, func(ctx context.Context, rdb redis.UniversalClient) (bool, error) {
		return rdb.SetNX(ctx, key, token, r.o.TTL).Result()
	})
	l := &Lease{Key: key, Token: token, TTL: r.o.TTL, Deadline: r.o.deadline(start)}
	if got >= r.quorum && time.Now().Before(l.Deadline) {
		return l, nil
	}
	// Undo the minority we may hold, including SETs that timed out but landed.
	_ = r.Release(context.WithoutCancel(ctx), l)
	if got > 0 || errs > 0 {
		// A SET that timed out may have landed: the key may have been
		// ours for a while, so this is no refusal.
		return nil, fmt.Errorf("%w: %d of %d masters, %d without an answer in %s, quorum %d (%w)",
			ErrNotAcquired, got, len(r.nodes), errs, r.nodeTimeout, r.quorum, ErrUndone)
	}
	return nil, fmt.Errorf("%w: %d of %d masters, quorum %d", ErrNotAcquired, got, len(r.nodes), r.quorum)
}

// Release deletes our token on every master. The lock counts as released
// when a quorum deleted it, and as no longer ours only when every master
// answered and none still had it: deleting some copies took effect.
func (r *Redlock) Release(ctx context.Context, l *Lease) error {
	deleted, errs := r.onAll(ctx, r.o.Timeout, func(ctx context.Context, rdb redis.UniversalClient) (bool, error) {
		n, err := releaseScript.Run(ctx, rdb, []string{l.Key}, l.Token).Int()
		return n == 1, err
	})
	switch {
	case deleted >= r.quorum:
		return nil
	case errs == 0 && deleted == 0:
		return fmt.Errorf("%w: no master still had it", ErrNotHeld)
	case errs == 0:
		// The copies it deleted were ours and are gone: whatever the
		// quorum, the release changed what another client can take.
		return fmt.Errorf("release deleted the lock on %d of %d masters, fewer than the quorum %d", deleted, len(r.nodes), r.quorum)
	default:
		return fmt.Errorf("release reached %d of %d masters", len(r.nodes)-errs, len(r.nodes))
	}
}

// onAll runs f on every master in parallel and counts the trues and errors.
func (r *Redlock) onAll(ctx context.Context, timeout time.Duration, f func(context.Context, redis.UniversalClient) (bool, error)) (trues, errs int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, rdb := range r.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			ok, err := f(cctx, rdb)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs++
			} else if ok {
				trues++
			}
		}()
	}
	wg.Wait()
	return trues, errs
}

// Extend gives l a new TTL on every master that still holds its token; it
// is extended when a quorum did within the new validity, as an acquire
// counts. Short of that it is no longer held only when every master
// answered: extending some copies took effect.
func (r *Redlock) Extend(ctx context.Context, l *Lease) error {
	start := time.Now()
	extended, errs := r.onAll(ctx, r.nodeTimeout, func(ctx context.Context, rdb redis.UniversalClient) (bool, error) {
		n, err := extendScript.Run(ctx, rdb, []string{l.Key}, l.Token, r.o.TTL.Milliseconds()).Int()
		return n == 1, err
	})
	deadline := r.o.deadline(start)
	switch {
	case extended >= r.quorum && time.Now().Before(deadline):
		l.Deadline = deadline
		return nil
	case errs == 0 && extended == 0:
		return fmt.Errorf("%w: no master still had it", ErrNotHeld)
	}
	return fmt.Errorf("extended on %d of %d masters (%d without an answer in %s), quorum %d", extended, len(r.nodes), errs, r.nodeTimeout, r.quorum)
}
