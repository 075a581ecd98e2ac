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
	Register("simple-wait", "simple plus WAIT 1 on the same connection; rolled back (not acquired) when no replica acknowledged in time", NewSimpleWait(1))
	InDebate("simple-wait", 2)
}

// SimpleWait is the simple lock followed by WAIT numreplicas, as Redisson
// does for locks on a master with replicas: when fewer replicas acknowledged
// the SET within the timeout, the lock is released again and the acquire
// refused. WAIT narrows the failover window (the SET is on the replicas when
// the master dies) but does not close it: Redis replication stays
// asynchronous, and a failover can still promote a replica that missed it.
type SimpleWait struct {
	rdb      redis.UniversalClient
	o        Options
	replicas int
	// wait is WAIT's own timeout: half the call timeout and of the
	// client's read timeout, so that the server answers before the client
	// gives up on the connection.
	wait time.Duration
}

// NewSimpleWait gives the factory of a simple-wait lock that waits for
// replicas acknowledgements. The registered "simple-wait" waits for 1.
func NewSimpleWait(replicas int) Factory {
	return func(e endpoints.Endpoints, o Options) (Lock, error) {
		if replicas < 1 {
			return nil, fmt.Errorf("lock simple-wait needs numreplicas >= 1, got %d", replicas)
		}
		rdb, err := OneClient("simple-wait", e, o)
		if err != nil {
			return nil, err
		}
		o = o.WithDefaults()
		wait := o.Timeout / 2
		if rt := o.Conn.ReadTimeout; rt > 0 {
			wait = min(wait, rt/2)
		}
		return &SimpleWait{rdb: rdb, o: o, replicas: replicas, wait: max(wait, time.Millisecond)}, nil
	}
}

// Close closes the lock's connections.
func (s *SimpleWait) Close() error { return s.rdb.Close() }

// WaitsForReplicas is how many replicas must acknowledge a grant.
func (s *SimpleWait) WaitsForReplicas() int { return s.replicas }

func (s *SimpleWait) Acquire(ctx context.Context, key string) (*Lease, error) {
	return s.o.Retry(ctx, func() (*Lease, error) { return s.try(ctx, key) })
}

func (s *SimpleWait) try(ctx context.Context, key string) (*Lease, error) {
	token := newToken()
	start := time.Now()
	// WAIT counts acknowledgements of the writes of the connection that
	// sends it: SET and WAIT go on one connection taken from the pool.
	cctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	conn, err := oneConn(cctx, s.rdb, key)
	if err != nil {
		return nil, AcquireResult(false, err)
	}
	defer conn.Close()
	if err := AcquireResult(conn.SetNX(cctx, key, token, s.o.TTL).Result()); err != nil {
		return nil, err
	}
	l := &Lease{Key: key, Token: token, TTL: s.o.TTL, Deadline: s.o.deadline(start)}
	wctx, wcancel := context.WithTimeout(ctx, s.o.Timeout)
	defer wcancel()
	// Not conn.Wait: go-redis gives that a read timeout of WAIT's timeout
	// plus 10 s, which only a client with ContextTimeoutEnabled would cut
	// short at wctx's deadline. A plain command keeps the client's read
	// timeout, which the WAIT timeout stays under.
	wait := redis.NewIntCmd(wctx, "wait", s.replicas, s.wait.Milliseconds())
	_ = conn.Process(wctx, wait)
	acked, err := wait.Result()
	if err == nil && acked >= int64(s.replicas) {
		return l, nil
	}
	why := fmt.Errorf("%d of %d replicas acknowledged within %s", acked, s.replicas, s.wait)
	if err != nil {
		why = fmt.Errorf("WAIT failed: %w", err)
	}
	// Roll back: the SET is ours, so the owner-checked release undoes it
	// (ErrNotHeld: it expired or a failover lost it; not ours either way).
	rerr := releaseOn(context.WithoutCancel(ctx), s.rdb, s.o.Timeout, l)
	if rerr != nil && !errors.Is(rerr, ErrNotHeld) {
		// The SET may still stand under our token: the outcome is unknown.
		// %v: a roll back that never ran (ErrNoEffect) leaves the SET standing,
		// which is no certain failure of the acquire.
		return nil, fmt.Errorf("%w; roll back: %v", why, rerr)
	}
	return nil, fmt.Errorf("%w: %w, rolled back (%w)", ErrNotAcquired, why, ErrUndone)
}

func (s *SimpleWait) Release(ctx context.Context, l *Lease) error {
	return releaseOn(ctx, s.rdb, s.o.Timeout, l)
}

// oneConn is one connection to the master that owns key, for commands that
// must share it (WAIT counts the writes of its own connection). On a Redis
// Cluster it is the slot owner's, as the client's slot map names it: a
// stale map gets MOVED, which leaves the acquire unknown, never wrong.
func oneConn(ctx context.Context, rdb redis.UniversalClient, key string) (*redis.Conn, error) {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Conn(), nil
	case *redis.ClusterClient:
		m, err := c.MasterForKey(ctx, key)
		if err != nil {
			return nil, err
		}
		return m.Conn(), nil
	}
	return nil, fmt.Errorf("lock simple-wait cannot take one connection from a %T", rdb)
}
