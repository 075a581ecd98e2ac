package locks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/endpoints"
)

func init() {
	Register("simple", "SET key token NX PX ttl on one master, owner-checked Lua release", NewSimple)
	InDebate("simple", 1)
}

// Simple is the single-instance lock: SET NX PX to take it, a script that
// deletes only our own token to release it.
type Simple struct {
	rdb redis.UniversalClient
	o   Options
}

// NewSimple builds a simple lock over a single master group.
func NewSimple(e endpoints.Endpoints, o Options) (Lock, error) {
	rdb, err := OneClient("simple", e, o)
	if err != nil {
		return nil, err
	}
	return &Simple{rdb: rdb, o: o.WithDefaults()}, nil
}

// Close closes the lock's connections.
func (s *Simple) Close() error { return s.rdb.Close() }

func (s *Simple) Acquire(ctx context.Context, key string) (*Lease, error) {
	return s.o.Retry(ctx, func() (*Lease, error) { return s.try(ctx, key) })
}

func (s *Simple) try(ctx context.Context, key string) (*Lease, error) {
	token := newToken()
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	ok, err := s.rdb.SetNX(cctx, key, token, s.o.TTL).Result()
	l := &Lease{Key: key, Token: token, TTL: s.o.TTL, Deadline: s.o.deadline(start)}
	switch err := AcquireResult(ok, err); {
	case Failed(err):
		return nil, err
	case err != nil:
		return nil, undoUnknown(ctx, s.rdb, s.o.Timeout, l, err)
	case ctx.Err() != nil:
		return nil, undoUnknown(ctx, s.rdb, s.o.Timeout, l, fmt.Errorf("acquired after the caller gave up: %w", ctx.Err()))
	}
	return l, nil
}

// undoUnknown releases a lock whose acquire may have taken effect but whose
// caller will never get the lease (the call failed or the caller gave up),
// so that nothing is left behind. The outcome stays unknown: the lock may
// have been held in between.
func undoUnknown(ctx context.Context, rdb redis.UniversalClient, timeout time.Duration, l *Lease, err error) error {
	if uerr := releaseOn(context.WithoutCancel(ctx), rdb, timeout, l); uerr != nil && !errors.Is(uerr, ErrNotHeld) {
		return fmt.Errorf("%w; undoing it: %v", err, uerr)
	}
	return err
}

func (s *Simple) Release(ctx context.Context, l *Lease) error {
	return releaseOn(ctx, s.rdb, s.o.Timeout, l)
}

// releaseOn runs the owner-checked release on one node.
func releaseOn(ctx context.Context, rdb redis.UniversalClient, timeout time.Duration, l *Lease) error {
	return ownerChecked(ctx, rdb, timeout, releaseScript, l.Key, l.Token)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Extend gives l a new TTL when its key still holds l's token.
func (s *Simple) Extend(ctx context.Context, l *Lease) error {
	start := time.Now()
	if err := extendOn(ctx, s.rdb, s.o.Timeout, l); err != nil {
		return err
	}
	l.Deadline = s.o.deadline(start)
	return nil
}
