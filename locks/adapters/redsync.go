package adapters

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/locks/adapters/redsyncanswer"
)

func init() {
	locks.Register("redsync", "go-redsync/redsync/v4 unmodified: one pool per master group (single instance on sentinel, Redlock on N masters)", NewRedsync)
	locks.InDebate("redsync", 8)
}

// Redsync drives a redsync.Redsync. Options map onto its mutex options:
// TTL -> WithExpiry; Retries -> WithTries(Retries+1) with a random delay up
// to RetryDelay between tries; DriftFactor -> WithDriftFactor (redsync has
// no drift floor); the per-try timeout (redsync: expiry * timeout factor)
// is min(TTL/20, Timeout), as in our redlock. The lease deadline is the
// mutex's own Until(). Its answers are read by redsyncanswer, as the
// driver's at any v4 version are.
type Redsync struct {
	rs      *redsync.Redsync
	clients []redis.UniversalClient
	o       locks.Options
	opts    []redsync.Option
}

// NewRedsync builds redsync over one go-redis pool per master group.
func NewRedsync(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	if e.Groups() < 1 {
		return nil, fmt.Errorf("lock redsync needs at least one master")
	}
	if err := locks.IndependentMasters("redsync", e); err != nil {
		return nil, err
	}
	o = o.WithDefaults()
	clients, err := o.Clients(e)
	if err != nil {
		return nil, err
	}
	pools := make([]rsredis.Pool, len(clients))
	for i, c := range clients {
		pools[i] = goredis.NewPool(c)
	}
	delay := o.RetryDelay
	perTry := min(o.TTL/20, o.Timeout)
	opts := []redsync.Option{
		redsync.WithExpiry(o.TTL),
		redsync.WithTries(o.Retries + 1),
		redsync.WithRetryDelayFunc(func(int) time.Duration { return rand.N(delay) }),
		redsync.WithDriftFactor(o.DriftFactor),
		redsync.WithTimeoutFactor(float64(perTry) / float64(o.TTL)),
	}
	return &Redsync{rs: redsync.New(pools...), clients: clients, o: o, opts: opts}, nil
}

// Close closes the go-redis clients under the pools.
func (r *Redsync) Close() error {
	var errs []error
	for _, c := range r.clients {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

func (r *Redsync) Acquire(ctx context.Context, key string) (*locks.Lease, error) {
	m := r.rs.NewMutex(key, r.opts...)
	start := time.Now()
	err := m.LockContext(ctx)
	if err == nil {
		return &locks.Lease{Key: key, Token: m.Value(), TTL: r.o.TTL, Deadline: m.Until()}, nil
	}
	return nil, redsyncanswer.Acquire(err, ctx.Err(), len(r.clients), redsyncanswer.InTime(time.Since(start), r.o.TTL, r.o.DriftFactor))
}

// Release unlocks through a mutex that carries the lease's value
// (redsync.WithValue, its documented way to release a lock from elsewhere).
func (r *Redsync) Release(ctx context.Context, l *locks.Lease) error {
	m := r.rs.NewMutex(l.Key, append(r.opts[:len(r.opts):len(r.opts)], redsync.WithValue(l.Token))...)
	ctx, cancel := context.WithTimeout(ctx, r.o.Timeout)
	defer cancel()
	ok, err := m.UnlockContext(ctx)
	return redsyncanswer.Held("unlock", ok, err, len(r.clients))
}

// Extend is redsync's ExtendContext through a mutex that carries the
// lease's value; the deadline is the mutex's own Until after it.
func (r *Redsync) Extend(ctx context.Context, l *locks.Lease) error {
	m := r.rs.NewMutex(l.Key, append(r.opts[:len(r.opts):len(r.opts)], redsync.WithValue(l.Token))...)
	ctx, cancel := context.WithTimeout(ctx, r.o.Timeout)
	defer cancel()
	ok, err := m.ExtendContext(ctx)
	if err := redsyncanswer.Held("extend", ok, err, len(r.clients)); err != nil {
		return err
	}
	l.Deadline = m.Until()
	return nil
}
