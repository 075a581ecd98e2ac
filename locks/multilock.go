package locks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/endpoints"
)

func init() {
	Register("multilock", "Redisson MultiLock: SET NX PX with one token on every one of N independent masters in parallel, all or nothing", NewMultiLock)
	InDebate("multilock", 5)
}

// MultiLock holds a key only when it holds it on every master: unlike
// RedLock there is no quorum, so one dead master blocks every acquire.
type MultiLock struct {
	nodes []redis.UniversalClient
	o     Options
}

// NewMultiLock builds a MultiLock over one client per independent master.
func NewMultiLock(e endpoints.Endpoints, o Options) (Lock, error) {
	if e.Groups() < 1 {
		return nil, fmt.Errorf("lock multilock needs at least one master")
	}
	if err := IndependentMasters("multilock", e); err != nil {
		return nil, err
	}
	clients, err := o.Clients(e)
	if err != nil {
		return nil, err
	}
	return &MultiLock{nodes: clients, o: o.WithDefaults()}, nil
}

// Close closes the lock's connections.
func (m *MultiLock) Close() error { return closeAll(m.nodes...) }

// Acquire tries up to 1+Retries times, and keeps trying while Wait lasts.
func (m *MultiLock) Acquire(ctx context.Context, key string) (*Lease, error) {
	return m.o.Retry(ctx, func() (*Lease, error) { return m.try(ctx, key) })
}

func (m *MultiLock) try(ctx context.Context, key string) (*Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, errors.Join(ErrNotAcquired, err)
	}
	token := newToken()
	start := time.Now()
	errs := m.onAll(ctx, func(ctx context.Context, rdb redis.UniversalClient) error {
		ctx, cancel := context.WithTimeout(ctx, m.o.Timeout)
		defer cancel()
		ok, err := rdb.SetNX(ctx, key, token, m.o.TTL).Result()
		switch {
		case err != nil && Unapplied(err):
			return errors.Join(ErrNoEffect, err)
		case err != nil:
			return err
		case !ok:
			return ErrNotAcquired
		}
		return nil
	})
	l := &Lease{Key: key, Token: token, TTL: m.o.TTL, Deadline: m.o.deadline(start)}
	refused, unknown := 0, 0
	var firstUnknown error
	for _, err := range errs {
		switch {
		case err == nil:
		case Failed(err):
			refused++
		default:
			unknown++
			if firstUnknown == nil {
				firstUnknown = err
			}
		}
	}
	if refused == 0 && unknown == 0 && ctx.Err() == nil && time.Now().Before(l.Deadline) {
		return l, nil
	}
	// Undo what we hold, including SETs that timed out but landed. The
	// release is owner-checked, so masters that refused keep their holder.
	undoErr := m.Release(context.WithoutCancel(ctx), l)
	switch {
	case refused > 0:
		// One master certainly did not take our token: we never held all.
		return nil, fmt.Errorf("%w: %d of %d masters refused", ErrNotAcquired, refused, len(m.nodes))
	case unknown > 0:
		return nil, fmt.Errorf("multilock: %d of %d masters did not answer: %w", unknown, len(m.nodes), firstUnknown)
	case ctx.Err() != nil:
		if undoErr != nil {
			return nil, fmt.Errorf("acquire took the lock after its context ended: %w; undoing it: %v", ctx.Err(), undoErr)
		}
		return nil, fmt.Errorf("acquire took the lock after its context ended (released again): %w", ctx.Err())
	}
	return nil, fmt.Errorf("%w: the validity ran out while acquiring", ErrNotAcquired)
}

// Release deletes our token on every master. It is ErrNotHeld when every
// master answered that it no longer had our token, and of unknown effect
// when it deleted some copies and not others, or some master did not
// answer.
func (m *MultiLock) Release(ctx context.Context, l *Lease) error {
	errs := m.onAll(ctx, func(ctx context.Context, rdb redis.UniversalClient) error {
		return releaseOn(ctx, rdb, m.o.Timeout, l)
	})
	notHeld, noEffect, unknown := 0, 0, 0
	var firstUnknown error
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, ErrNotHeld):
			notHeld++
		case errors.Is(err, ErrNoEffect):
			noEffect++
		default:
			unknown++
			if firstUnknown == nil {
				firstUnknown = err
			}
		}
	}
	switch {
	case notHeld == 0 && noEffect == 0 && unknown == 0:
		return nil
	case notHeld == len(m.nodes):
		return fmt.Errorf("%w: no master still had it", ErrNotHeld)
	case noEffect == 0 && unknown == 0:
		// The copies it deleted were ours and are gone: an effect.
		return fmt.Errorf("release deleted the lock on %d of %d masters; the others no longer had it", len(m.nodes)-notHeld, len(m.nodes))
	case noEffect == len(m.nodes):
		return fmt.Errorf("%w: no master reached", ErrNoEffect)
	case firstUnknown == nil:
		firstUnknown = errors.New("not reached")
	}
	return fmt.Errorf("multilock release: %d of %d masters did not answer: %w", unknown+noEffect, len(m.nodes), firstUnknown)
}

// onAll runs f on every master in parallel; errs[i] is master i's answer.
func (m *MultiLock) onAll(ctx context.Context, f func(context.Context, redis.UniversalClient) error) []error {
	errs := make([]error, len(m.nodes))
	var wg sync.WaitGroup
	for i, rdb := range m.nodes {
		wg.Go(func() { errs[i] = f(ctx, rdb) })
	}
	wg.Wait()
	return errs
}
