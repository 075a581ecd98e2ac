package locks_test

import (
	"context"
	"errors"
	"sync"
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
	pauseLifted(t, masters) // whatever was queued under the pause has run
	require.False(t, leftBehind(), "the acquire left the lock or a queue entry behind (%v)", err)
}

// pauseLifted waits until a write goes through on each master: the
// CLIENT PAUSE is over, and the commands queued under it, answered in
// order, ran before.
func pauseLifted(t *testing.T, masters []*redis.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, rdb := range masters {
		require.NoError(t, rdb.Set(ctx, "deadbolt-pause-probe", 1, 0).Err())
		require.NoError(t, rdb.Del(ctx, "deadbolt-pause-probe").Err())
	}
}

// renewedTimes waits until log has seen n renewals.
func renewedTimes(t *testing.T, log *renewLog, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(log.renewals()) >= n }, 30*time.Second, 5*time.Millisecond, "fewer than %d renewals", n)
}

// subscribed waits until someone listens on the key's unlock channel: a
// waiter has settled into its wait.
func subscribed(t *testing.T, rdb *redis.Client, key string) {
	t.Helper()
	ch := "deadbolt_lock__channel:{" + key + "}"
	require.Eventually(t, func() bool { return rdb.PubSubNumSub(context.Background(), ch).Val()[ch] > 0 }, 30*time.Second, 5*time.Millisecond, "no waiter listens on %s", ch)
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
		// Until six renewals (about two TTLs), the key never runs down.
		require.Eventually(t, func() bool {
			pttl := rdb.PTTL(ctx, "wd").Val()
			require.True(t, pttl > 0 && pttl <= ttl, "PTTL %v: the watchdog let the key run down", pttl)
			return len(log.renewals()) >= 6
		}, 30*time.Second, 5*time.Millisecond, "fewer than six renewals")
		require.False(t, isClosed(lease.Lost), "a renewed lease is not lost")
		require.Equal(t, "1", rdb.HGet(ctx, "wd", lease.Token).Val(), "renewals do not add holds")

		rs := log.renewals()
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
		// Absence can only be watched for a while: a TTL, past the next
		// renewal's turn (TTL/3).
		require.Never(t, func() bool { return len(log.renewals()) != n }, ttl, 5*time.Millisecond, "the watchdog went on renewing after the final release")
		require.Equal(t, int64(0), rdb.Exists(ctx, "wd").Val())
		require.False(t, isClosed(lease.Lost), "a released lease is not lost")
	})

	t.Run("LostWhenDeleted", func(t *testing.T) {
		ttl := 600 * time.Millisecond
		log := &renewLog{}
		l := clustertest.NewLock(t, "reentrant", c, locks.Options{TTL: ttl, Events: log})
		lease, err := l.Acquire(ctx, "lost")
		require.NoError(t, err)
		log.noteAcquired(lease)
		renewedTimes(t, log, 1)
		require.Equal(t, int64(1), rdb.Del(ctx, "lost").Val())
		deadline := log.lastDeadline()
		closed := lostWithin(t, lease, 30*time.Second)
		// The next renewal finds the key gone, before the deadline alone
		// would have ended the lease.
		require.True(t, closed.Before(deadline), "Lost came only with the deadline (%v after it)", closed.Sub(deadline))
		rs := log.renewals()
		require.NotEmpty(t, rs)
		require.ErrorIs(t, rs[len(rs)-1].err, locks.ErrNotHeld, "the renewal that found the key gone must say so")
		require.Never(t, func() bool { return len(log.renewals()) != len(rs) }, ttl/2, 5*time.Millisecond, "the watchdog stops once the lease is lost")

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
		require.Less(t, time.Since(start), ttl, "a try-lock must not wait out the holder's lease")

		got := acquireLater(ctx, waiter, "wake")
		// Once the waiter has settled into its wait, its fallback poll is
		// the holder's PTTL, close to 5s.
		subscribed(t, rdb, "wake")
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
		require.Less(t, 5*latency, pttl, "the waiter was not woken by the unlock message: the wake-up must beat the fallback poll by far")
		require.NoError(t, waiter.Release(ctx, r.lease))
	})

	t.Run("CancelledContext", func(t *testing.T) {
		holder := clustertest.NewLock(t, "reentrant", c, locks.Options{TTL: 10 * time.Second})
		// The waiter would wait for minutes: only the cancel ends it soon.
		waiter := clustertest.NewLock(t, "reentrant", c, locks.Options{TTL: 10 * time.Minute, Wait: 10 * time.Minute})
		held, err := holder.Acquire(ctx, "cancel")
		require.NoError(t, err)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		gaveUp := make(chan error, 1)
		go func() { _, err := waiter.Acquire(cctx, "cancel"); gaveUp <- err }()
		subscribed(t, rdb, "cancel")
		cancel()
		select {
		case err = <-gaveUp:
		case <-time.After(time.Minute):
			t.Fatal("a cancelled waiter must return at once, not wait on")
		}
		require.Error(t, err)
		require.True(t, locks.Failed(err), "a waiter cancelled between tries certainly did not acquire: %v", err)
		require.ErrorIs(t, err, context.Canceled)
		require.NoError(t, holder.Release(ctx, held))
		require.Never(t, func() bool { return rdb.Exists(ctx, "cancel").Val() != 0 }, 100*time.Millisecond, 5*time.Millisecond, "the cancelled waiter took the lock after all")

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
		require.Empty(t, log.renewals(), "a fixed lease is never renewed")
		require.Eventually(t, func() bool { return rdb.Exists(ctx, "fixed").Val() == 0 }, 30*time.Second, 5*time.Millisecond, "the key expires with the lease")
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
	renewedTimes(t, log, 1)
	killed := time.Now()
	require.NoError(t, c.ByRole(cluster.RoleRedis)[0].Kill(ctx))

	closed := lostWithin(t, lease, 30*time.Second)
	last := log.lastDeadline()
	t.Logf("lost %v after the kill began, %v after the last deadline", closed.Sub(killed), closed.Sub(last))
	require.False(t, closed.Before(last), "Lost closed before the validity deadline")
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
