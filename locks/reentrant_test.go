package locks_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// contend runs 6 workers, each with its own lock instance (its own client),
// through rounds of acquire, hold, release on one key, and fails when two
// were inside at once. It returns the grants' Seq in the order the holders
// were inside, and how many acquires succeeded.
// granted is a background acquire's outcome and when it came.
type granted struct {
	lease *locks.Lease
	err   error
	at    time.Time
}

// acquireLater starts an acquire of key in the background.
func acquireLater(ctx context.Context, l locks.Lock, key string) <-chan granted {
	got := make(chan granted, 1)
	go func() {
		lease, err := l.Acquire(ctx, key)
		got <- granted{lease, err, time.Now()}
	}()
	return got
}

// renewal is one watchdog renewal as Events saw it.
type renewal struct {
	invoked, completed time.Time
	deadline           time.Time // the lease's deadline after a successful renewal
	err                error
}

// renewLog records the watchdog's renewals through locks.Events.
type renewLog struct {
	mu      sync.Mutex
	invoked time.Time
	done    []renewal
	// acquired is the lease deadline the test read right after Acquire,
	// stored under mu, which orders it before the first renewal.
	acquired time.Time
}

func (r *renewLog) Renewing(*locks.Lease) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.invoked = time.Now()
}

func (r *renewLog) Renewed(l *locks.Lease, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rn := renewal{invoked: r.invoked, completed: time.Now(), err: err}
	if err == nil {
		rn.deadline = l.Deadline // the concurrency rule: read it here
	}
	r.done = append(r.done, rn)
}

func (r *renewLog) noteAcquired(l *locks.Lease) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acquired = l.Deadline
}

func (r *renewLog) renewals() []renewal {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]renewal(nil), r.done...)
}

// lastDeadline is the latest validity deadline the holder was told of.
func (r *renewLog) lastDeadline() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.acquired
	for _, rn := range r.done {
		if rn.err == nil {
			d = rn.deadline
		}
	}
	return d
}

// nodeClient is a direct connection to the i-th master.
func nodeClient(t *testing.T, c *cluster.Cluster, i int) *redis.Client {
	t.Helper()
	rdb := c.ByRole(cluster.RoleRedis)[i].Client()
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// lostWithin waits for l.Lost and returns when it was closed.
func lostWithin(t *testing.T, l *locks.Lease, d time.Duration) time.Time {
	t.Helper()
	require.NotNil(t, l.Lost)
	select {
	case <-l.Lost:
		return time.Now()
	case <-time.After(d):
		t.Fatalf("Lost not closed within %v", d)
		return time.Time{}
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// cancelWhilePaused ends an acquire's context while its script waits on
// masters paused with CLIENT PAUSE, so that the lock is taken after the
// context ended: the acquire must fail and leave nothing behind. With
// deadline, the context times out (the client gives up on the call);
// without, it is cancelled (the call completes with the lock granted).
func cancelWhilePaused(t *testing.T, l locks.Lock, key string, masters []*redis.Client, deadline bool, leftBehind func() bool) {
	t.Helper()
	ctx := context.Background()
	// Load the scripts first: a NOSCRIPT answer would make go-redis send
	// EVAL under the ended context, which never leaves the client.
	warm, err := l.Acquire(ctx, key)
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx, warm))
	for _, rdb := range masters {
		require.NoError(t, rdb.Do(ctx, "CLIENT", "PAUSE", 300, "WRITE").Err())
	}
	var cctx context.Context
	var cancel context.CancelFunc
	if deadline {
		cctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
	} else {
		cctx, cancel = context.WithCancel(ctx)
		time.AfterFunc(50*time.Millisecond, cancel)
	}
	defer cancel()
	lease, err := l.Acquire(cctx, key)
	require.Error(t, err, "an acquire whose caller has gone must not return a lease")
	require.Nil(t, lease)
	require.False(t, locks.Failed(err), "the acquire went through or may have: its outcome is not a certain failure: %v", err)
	time.Sleep(300 * time.Millisecond) // past the pause, whatever was queued has run
	require.False(t, leftBehind(), "the acquire left the lock or a queue entry behind (%v)", err)
}

func TestReentrant(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	ctx := context.Background()
	rdb := nodeClient(t, c, 0)

	t.Run("MutualExclusion", func(t *testing.T) {
		_, acquired := clustertest.Contend(t, c, "reentrant", locks.Options{TTL: 10 * time.Second, Wait: 10 * time.Second}, 20)
		require.Equal(t, int64(6*20), acquired, "every blocking acquire must get the lock in the end")
	})

	t.Run("Reentrancy", func(t *testing.T) {
		a := clustertest.NewLock(t, "reentrant", c, locks.Options{TTL: 10 * time.Second})
		b := clustertest.NewLock(t, "reentrant", c, locks.Options{TTL: 10 * time.Second})
		first, err := a.Acquire(ctx, "re")
		require.NoError(t, err)
		again, err := a.Acquire(ctx, "re")
		require.NoError(t, err)
		require.Same(t, first, again, "a re-entry returns the instance's lease")
		require.Equal(t, "2", rdb.HGet(ctx, "re", first.Token).Val(), "two holds, one owner field")
		require.Equal(t, int64(1), rdb.HLen(ctx, "re").Val())

		_, err = b.Acquire(ctx, "re")
		require.ErrorIs(t, err, locks.ErrNotAcquired, "another client must not get in")
		require.ErrorIs(t, b.Release(ctx, first), locks.ErrNotHeld, "another client must not release it")
		forged := *first
		forged.Token = "someone-else"
		require.ErrorIs(t, a.Release(ctx, &forged), locks.ErrNotHeld)
		require.Equal(t, "2", rdb.HGet(ctx, "re", first.Token).Val(), "refused releases changed nothing")

		require.NoError(t, a.Release(ctx, first))
		require.Equal(t, "1", rdb.HGet(ctx, "re", first.Token).Val(), "the inner release keeps the lock")
		require.Greater(t, rdb.PTTL(ctx, "re").Val(), time.Duration(0))
		require.NoError(t, a.Release(ctx, first))
		require.Equal(t, int64(0), rdb.Exists(ctx, "re").Val(), "the outermost release deletes the lock")
		require.ErrorIs(t, a.Release(ctx, first), locks.ErrNotHeld, "nothing left to release")

		next, err := a.Acquire(ctx, "re")
		require.NoError(t, err)
		require.NotEqual(t, first.Token, next.Token, "a new outermost acquire takes a fresh owner token")
		require.NoError(t, a.Release(ctx, next))
	})

	t.Run("Watchdog", func(t *testing.T) {
		ttl := 600 * time.Millisecond
		log := &renewLog{}
		o := locks.Options{TTL: ttl, Events: log}
		l := clustertest.NewLock(t, "reentrant", c, o)
		lease, err := l.Acquire(ctx, "wd")
		require.NoError(t, err)
		log.noteAcquired(lease)
		start := time.Now()
		for time.Since(start) < 3*ttl+200*time.Millisecond {
			pttl := rdb.PTTL(ctx, "wd").Val()
			require.True(t, pttl > 0 && pttl <= ttl, "PTTL %v at %v: the watchdog let the key run down", pttl, time.Since(start))
			time.Sleep(50 * time.Millisecond)
		}
		require.False(t, isClosed(lease.Lost), "a renewed lease is not lost")
		require.Equal(t, "1", rdb.HGet(ctx, "wd", lease.Token).Val(), "renewals do not add holds")

		rs := log.renewals()
		// One renewal per TTL/3: about 10 in 2s; allow for a slow machine.
		require.GreaterOrEqual(t, len(rs), 6, "renewals: %+v", rs)
		drift := time.Duration(float64(ttl)*0.01) + 2*time.Millisecond
		prev := time.Time{}
		for i, rn := range rs {
			require.NoError(t, rn.err, "renewal %d", i)
			require.False(t, rn.deadline.Before(rn.invoked.Add(ttl-drift)), "renewal %d: deadline before invoke + TTL - drift", i)
			require.False(t, rn.deadline.After(rn.completed.Add(ttl-drift)), "renewal %d: deadline after the renewal ended + TTL - drift", i)
			require.True(t, rn.deadline.After(prev), "renewal %d did not move the deadline on", i)
			prev = rn.deadline
		}

		require.NoError(t, l.Release(ctx, lease))
		require.Equal(t, time.Duration(-2), rdb.PTTL(ctx, "wd").Val(), "released: the key is gone")
		n := len(log.renewals())
		time.Sleep(ttl + 100*time.Millisecond)
		require.Equal(t, n, len(log.renewals()), "the watchdog went on renewing after the final release")
		require.Equal(t, int64(0), rdb.Exists(ctx, "wd").Val())
		require.False(t, isClosed(lease.Lost), "a released lease is not lost")
	})

	t.Run("LostWhenDeleted", func(t *testing.T) {
		ttl := 600 * time.Millisecond
		log := &renewLog{}
		l := clustertest.NewLock(t, "reentrant", c, locks.Options{TTL: ttl, Events: log})
		lease, err := l.Acquire(ctx, "lost")
		require.NoError(t, err)
		time.Sleep(250 * time.Millisecond)
		deleted := time.Now()
		require.Equal(t, int64(1), rdb.Del(ctx, "lost").Val())
		closed := lostWithin(t, lease, 2*ttl)
		// The next renewal, at most TTL/3 later, finds the key gone; the
		// deadline alone would take at least TTL/3 more.
		require.Less(t, closed.Sub(deleted), ttl/3+200*time.Millisecond, "Lost came late")
		rs := log.renewals()
		require.NotEmpty(t, rs)
		require.ErrorIs(t, rs[len(rs)-1].err, locks.ErrNotHeld, "the renewal that found the key gone must say so")
		time.Sleep(ttl / 2)
		require.Len(t, log.renewals(), len(rs), "the watchdog stops once the lease is lost")

		require.ErrorIs(t, l.Release(ctx, lease), locks.ErrNotHeld)
		next, err := l.Acquire(ctx, "lost")
		require.NoError(t, err)
		require.NotEqual(t, lease.Token, next.Token, "a lost lease is not re-entered")
		require.NoError(t, l.Release(ctx, next))
	})

	t.Run("WaiterWokenByUnlock", func(t *testing.T) {
		ttl := 5 * time.Second
		holder := clustertest.NewLock(t, "reentrant", c, locks.Options{TTL: ttl})
		waiter := clustertest.NewLock(t, "reentrant", c, locks.Options{TTL: ttl, Wait: 3 * ttl})
		trier := clustertest.NewLock(t, "reentrant", c, locks.Options{TTL: ttl})
		held, err := holder.Acquire(ctx, "wake")
		require.NoError(t, err)

		start := time.Now()
		_, err = trier.Acquire(ctx, "wake")
		require.ErrorIs(t, err, locks.ErrNotAcquired, "Wait=0 is a single try")
		require.Less(t, time.Since(start), 300*time.Millisecond, "a try-lock must not wait")

		got := acquireLater(ctx, waiter, "wake")
		// Let the waiter settle into its wait: its fallback poll is the
		// holder's PTTL, close to 5s.
		time.Sleep(400 * time.Millisecond)
		pttl := rdb.PTTL(ctx, "wake").Val()
		released := time.Now()
		require.NoError(t, holder.Release(ctx, held))
		var r granted
		select {
		case r = <-got:
		case <-time.After(2 * ttl):
			t.Fatal("the waiter never got the lock")
		}
		require.NoError(t, r.err)
		latency := r.at.Sub(released)
		t.Logf("woken %v after the release; fallback poll about %v", latency, pttl)
		require.Less(t, latency, 500*time.Millisecond, "the waiter was not woken by the unlock message")
		require.Less(t, 5*latency, pttl, "the wake-up must beat the fallback poll by far")
		require.NoError(t, waiter.Release(ctx, r.lease))
	})

	t.Run("CancelledContext", func(t *testing.T) {
		holder := clustertest.NewLock(t, "reentrant", c, locks.Options{TTL: 10 * time.Second})
		waiter := clustertest.NewLock(t, "reentrant", c, locks.Options{TTL: 10 * time.Second, Wait: 10 * time.Second})
		held, err := holder.Acquire(ctx, "cancel")
		require.NoError(t, err)
		cctx, cancel := context.WithCancel(ctx)
		var cancelled atomic.Int64
		time.AfterFunc(300*time.Millisecond, func() { cancelled.Store(time.Now().UnixNano()); cancel() })
		_, err = waiter.Acquire(cctx, "cancel")
		gaveUp := time.Now()
		require.Error(t, err)
		require.True(t, locks.Failed(err), "a waiter cancelled between tries certainly did not acquire: %v", err)
		require.ErrorIs(t, err, context.Canceled)
		require.Less(t, gaveUp.Sub(time.Unix(0, cancelled.Load())), 200*time.Millisecond, "a cancelled waiter must return at once")
		require.NoError(t, holder.Release(ctx, held))
		time.Sleep(100 * time.Millisecond)
		require.Equal(t, int64(0), rdb.Exists(ctx, "cancel").Val(), "the cancelled waiter took the lock after all")

		l := clustertest.NewLock(t, "reentrant", c, locks.Options{TTL: 10 * time.Second, Wait: time.Second})
		gone := func() bool { return rdb.Exists(ctx, "cancel").Val() != 0 }
		cancelWhilePaused(t, l, "cancel", []*redis.Client{rdb}, false, gone)
		cancelWhilePaused(t, l, "cancel", []*redis.Client{rdb}, true, gone)
	})

	t.Run("FixedLease", func(t *testing.T) {
		ttl := 400 * time.Millisecond
		log := &renewLog{}
		l := clustertest.NewLock(t, "reentrant-lease", c, locks.Options{TTL: ttl, Events: log})
		lease, err := l.Acquire(ctx, "fixed")
		require.NoError(t, err)
		closed := lostWithin(t, lease, 2*ttl)
		require.False(t, closed.Before(lease.Deadline), "Lost closed before the deadline")
		require.Less(t, closed.Sub(lease.Deadline), 150*time.Millisecond)
		require.Empty(t, log.renewals(), "a fixed lease is never renewed")
		time.Sleep(50 * time.Millisecond)
		require.Equal(t, int64(0), rdb.Exists(ctx, "fixed").Val(), "the key expires with the lease")
		require.ErrorIs(t, l.Release(ctx, lease), locks.ErrNotHeld)
	})
}

func TestReentrantLostWhenNodeDies(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	ctx := context.Background()
	ttl := 600 * time.Millisecond
	log := &renewLog{}
	l := clustertest.NewLock(t, "reentrant", c, locks.Options{TTL: ttl, Events: log})
	lease, err := l.Acquire(ctx, "k")
	require.NoError(t, err)
	log.noteAcquired(lease)
	time.Sleep(500 * time.Millisecond)
	killed := time.Now()
	require.NoError(t, c.ByRole(cluster.RoleRedis)[0].Kill(ctx))

	closed := lostWithin(t, lease, 3*ttl)
	last := log.lastDeadline()
	t.Logf("lost %v after the kill began, %v after the last deadline", closed.Sub(killed), closed.Sub(last))
	require.False(t, closed.Before(last), "Lost closed before the validity deadline")
	require.Less(t, closed.Sub(last), 300*time.Millisecond, "Lost came late")
	var failed int
	for _, rn := range log.renewals() {
		if rn.err != nil {
			failed++
			require.False(t, errors.Is(rn.err, locks.ErrNotHeld), "a dead node proves nothing about the key: %v", rn.err)
		}
	}
	require.NotZero(t, failed, "the renewals after the kill must fail")
	require.Error(t, l.Release(ctx, lease))
}
