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
	key                string
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
	rn := renewal{invoked: r.invoked, completed: time.Now(), key: l.Key, err: err}
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

// renewalsOf counts the renewals of key's leases.
func (r *renewLog) renewalsOf(key string) int {
	n := 0
	for _, rn := range r.renewals() {
		if rn.key == key {
			n++
		}
	}
	return n
}

// waitRenewals waits until key's leases were renewed n times.
func (r *renewLog) waitRenewals(t *testing.T, key string, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return r.renewalsOf(key) >= n }, 30*time.Second, 5*time.Millisecond,
		"want %d renewals of %s", n, key)
}

// watchdogRuns proves, without a clock, that l's watchdog went round
// while a released or lost lease of another key stood still: it holds a
// fresh lease of probe until that was renewed n times (n TTL/3 cycles).
func watchdogRuns(t *testing.T, l locks.Lock, log *renewLog, probe string, n int) {
	t.Helper()
	ctx := context.Background()
	lease, err := l.Acquire(ctx, probe)
	require.NoError(t, err)
	log.waitRenewals(t, probe, n)
	require.NoError(t, l.Release(ctx, lease))
}

// pauseOver waits until a CLIENT PAUSE WRITE on rdb has ended: a write
// blocks until then, and runs after the writes queued before it.
func pauseOver(t *testing.T, rdb *redis.Client) {
	t.Helper()
	require.NoError(t, rdb.Del(context.Background(), "deadbolt-test-pause-probe").Err())
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

// waitSubscribed waits until someone listens on channel.
func waitSubscribed(t *testing.T, rdb *redis.Client, channel string) {
	t.Helper()
	require.Eventually(t, func() bool { return rdb.PubSubNumSub(context.Background(), channel).Val()[channel] > 0 }, 10*time.Second, 5*time.Millisecond,
		"nobody listens on %s", channel)
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
	for _, rdb := range masters {
		pauseOver(t, rdb) // whatever was queued has run
	}
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
		// Sample the key's PTTL until six renewals (two TTLs) went by.
		start := time.Now()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for ; log.renewalsOf("wd") < 6; <-tick.C {
			pttl := rdb.PTTL(ctx, "wd").Val()
			require.True(t, pttl > 0 && pttl <= ttl, "PTTL %v at %v: the watchdog let the key run down", pttl, time.Since(start))
			require.Less(t, time.Since(start), 30*time.Second, "six renewals never came: %+v", log.renewals())
		}
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
		n := log.renewalsOf("wd")
		watchdogRuns(t, l, log, "wd-after", 4) // more than a TTL of renewal cycles
		require.Equal(t, n, log.renewalsOf("wd"), "the watchdog went on renewing after the final release")
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
		log.waitRenewals(t, "lost", 1)
		require.Equal(t, int64(1), rdb.Del(ctx, "lost").Val())
		closed := lostWithin(t, lease, 10*time.Second)
		// The next renewal found the key gone, before the lease ran out
		// (the deadline alone would close Lost no sooner than that).
		require.True(t, closed.Before(log.lastDeadline()), "Lost came only with the deadline, not from the renewal")
		rs := log.renewals()
		require.NotEmpty(t, rs)
		require.ErrorIs(t, rs[len(rs)-1].err, locks.ErrNotHeld, "the renewal that found the key gone must say so")
		watchdogRuns(t, l, log, "lost-after", 2)
		require.Equal(t, len(rs), log.renewalsOf("lost"), "the watchdog stops once the lease is lost")

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

		// A try that waited would run into this deadline, long before
		// the holder's TTL.
		tctx, cancel := context.WithTimeout(ctx, ttl/2)
		_, err = trier.Acquire(tctx, "wake")
		waited := tctx.Err()
		cancel()
		require.ErrorIs(t, err, locks.ErrNotAcquired, "Wait=0 is a single try")
		require.NoError(t, waited, "a try-lock must not wait")

		got := acquireLater(ctx, waiter, "wake")
		// Let the waiter settle into its wait: it listens for the unlock
		// message (its fallback poll is the holder's PTTL, close to 5s).
		waitSubscribed(t, rdb, "deadbolt_lock__channel:{wake}")
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
		waiter := clustertest.NewLock(t, "reentrant", c, locks.Options{TTL: 10 * time.Second, Wait: 10 * time.Second})
		held, err := holder.Acquire(ctx, "cancel")
		require.NoError(t, err)
		cctx, cancel := context.WithCancel(ctx)
		got := acquireLater(cctx, waiter, "cancel")
		// Cancel once the waiter waits between tries (it listens).
		waitSubscribed(t, rdb, "deadbolt_lock__channel:{cancel}")
		cancel()
		var r granted
		select {
		case r = <-got:
		case <-time.After(5 * time.Second): // half its Wait: an ignored cancel runs on to the Wait
			t.Fatal("a cancelled waiter must return at once, not at the end of its wait")
		}
		err = r.err
		require.Error(t, err)
		require.True(t, locks.Failed(err), "a waiter cancelled between tries certainly did not acquire: %v", err)
		require.ErrorIs(t, err, context.Canceled)
		require.NoError(t, holder.Release(ctx, held))
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
		closed := lostWithin(t, lease, 10*time.Second)
		require.False(t, closed.Before(lease.Deadline), "Lost closed before the deadline")
		require.Empty(t, log.renewals(), "a fixed lease is never renewed")
		require.Eventually(t, func() bool { return rdb.Exists(ctx, "fixed").Val() == 0 }, 10*time.Second, 5*time.Millisecond,
			"the key expires with the lease")
		require.ErrorIs(t, l.Release(ctx, lease), locks.ErrNotHeld)
	})
}

func TestReentrantLostWhenNodeDies(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	ctx := context.Background()
	ttl := 3 * time.Second
	log := &renewLog{}
	l := clustertest.NewLock(t, "reentrant", c, locks.Options{TTL: ttl, Events: log})
	lease, err := l.Acquire(ctx, "k")
	require.NoError(t, err)
	log.noteAcquired(lease)
	log.waitRenewals(t, "k", 1)
	killed := time.Now()
	require.NoError(t, c.ByRole(cluster.RoleRedis)[0].Kill(ctx))

	closed := lostWithin(t, lease, 10*ttl)
	last := log.lastDeadline()
	t.Logf("lost %v after the kill began, %v after the last deadline", closed.Sub(killed), closed.Sub(last))
	require.False(t, closed.Before(last), "Lost closed before the validity deadline")
	// Lost comes with the deadline, not a renewal round (TTL/3) or more
	// later.
	require.Less(t, closed.Sub(last), ttl/3, "Lost came late")
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
