package adapters

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/bsm/redislock"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

func init() {
	locks.Register("bsm", "bsm/redislock unmodified over one master group: Lua SET NX PX obtain, owner-checked release", NewBsm)
	locks.InDebate("bsm", 9)
}

// Bsm drives a redislock.Client. TTL is the obtain TTL; Retries map onto
// its RetryStrategy: NoRetry (its default) for 0, else LimitRetry(Retries)
// of LinearBackoff(RetryDelay) (a fixed delay where our own locks draw a
// random one up to RetryDelay). redislock exposes no validity, so the
// deadline is ours: acquire invoke time + TTL - drift, as for simple.
//
// redislock releases only through the *redislock.Lock that Obtain returned,
// so the adapter keeps each granted lock by token until its release. A
// lease this client never got (a forged or foreign token) cannot be handed
// to redislock at all: Release refuses it with ErrNotHeld without a call.
type Bsm struct {
	c   *redislock.Client
	rdb io.Closer
	o   locks.Options

	mu   sync.Mutex
	held map[string]*redislock.Lock
}

// NewBsm builds redislock over the go-redis client of a single master group.
func NewBsm(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	rdb, err := locks.OneClient("bsm", e, o)
	if err != nil {
		return nil, err
	}
	return &Bsm{c: redislock.New(rdb), rdb: rdb, o: o.WithDefaults(), held: map[string]*redislock.Lock{}}, nil
}

// Close closes the go-redis client.
func (b *Bsm) Close() error { return b.rdb.Close() }

func (b *Bsm) retry() redislock.RetryStrategy {
	if b.o.Retries == 0 {
		return redislock.NoRetry()
	}
	return redislock.LimitRetry(redislock.LinearBackoff(b.o.RetryDelay), b.o.Retries)
}

func (b *Bsm) Acquire(ctx context.Context, key string) (*locks.Lease, error) {
	start := time.Now()
	// Obtain runs its tries and backoffs under one context: give it a call
	// timeout per try plus the delays between them.
	n := time.Duration(b.o.Retries)
	ctx, cancel := context.WithTimeout(ctx, (n+1)*b.o.Timeout+n*b.o.RetryDelay)
	defer cancel()
	lk, err := b.c.Obtain(ctx, key, b.o.TTL, &redislock.Options{RetryStrategy: b.retry()})
	switch {
	case errors.Is(err, redislock.ErrNotObtained):
		return nil, fmt.Errorf("%w: %w", locks.ErrNotAcquired, err)
	case err != nil:
		return nil, fmt.Errorf("bsm: %w", locks.AcquireResult(false, err))
	}
	b.mu.Lock()
	b.held[lk.Token()] = lk
	b.mu.Unlock()
	return &locks.Lease{Key: key, Token: lk.Token(), TTL: b.o.TTL, Deadline: b.o.Deadline(start)}, nil
}

func (b *Bsm) Release(ctx context.Context, l *locks.Lease) error {
	b.mu.Lock()
	lk, ok := b.held[l.Token]
	delete(b.held, l.Token)
	b.mu.Unlock()
	if !ok || lk.Key() != l.Key {
		return fmt.Errorf("%w: bsm: no lock of this client has token %q on %q", locks.ErrNotHeld, l.Token, l.Key)
	}
	ctx, cancel := context.WithTimeout(ctx, b.o.Timeout)
	defer cancel()
	err := lk.Release(ctx)
	if errors.Is(err, redislock.ErrLockNotHeld) {
		return fmt.Errorf("%w: %w", locks.ErrNotHeld, err)
	}
	return heldResult(err)
}

// Extend is redislock's Refresh with the lease's TTL.
func (b *Bsm) Extend(ctx context.Context, l *locks.Lease) error {
	b.mu.Lock()
	lk, ok := b.held[l.Token]
	b.mu.Unlock()
	if !ok || lk.Key() != l.Key {
		return fmt.Errorf("%w: bsm: no lock of this client has token %q on %q", locks.ErrNotHeld, l.Token, l.Key)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, b.o.Timeout)
	defer cancel()
	err := lk.Refresh(ctx, b.o.TTL, nil)
	if errors.Is(err, redislock.ErrNotObtained) {
		return fmt.Errorf("%w: %w", locks.ErrNotHeld, err)
	}
	if err := heldResult(err); err != nil {
		return err
	}
	l.Deadline = b.o.Deadline(start)
	return nil
}

// heldResult maps a redislock error on a held lock (its "not held" answers
// taken out) through the shared classifier.
func heldResult(err error) error {
	if err == nil {
		return nil
	}
	if r := locks.HeldResult(true, err); r != nil {
		return fmt.Errorf("bsm: %w", r)
	}
	// A nil reply redislock did not expect: nothing says what it did.
	return fmt.Errorf("bsm: unexpected answer: %v", err)
}
