package locks_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/locks"
)

func TestFair(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	ctx := context.Background()
	rdb := nodeClient(t, c, 0)
	queueLen := func(key string) int64 { return rdb.LLen(ctx, locks.FairQueueKey(key)).Val() }
	// waitQueue waits until n waiters stand in key's queue.
	waitQueue := func(t *testing.T, key string, n int64) {
		t.Helper()
		require.Eventually(t, func() bool { return queueLen(key) == n }, 3*time.Second, 5*time.Millisecond,
			"queue of %s: want %d waiters", key, n)
	}

	t.Run("MutualExclusion", func(t *testing.T) {
		seqs, acquired := clustertest.Contend(t, c, "fair", locks.Options{TTL: 10 * time.Second, Wait: 10 * time.Second}, 20)
		require.Equal(t, int64(6*20), acquired, "every blocking acquire must get the lock in the end")
		for i := 1; i < len(seqs); i++ {
			require.Equal(t, seqs[i-1]+1, seqs[i], "grant numbers must follow the order of the holds")
		}
		require.Zero(t, queueLen("contended"), "nobody is left in the queue")
	})

	t.Run("Reentrancy", func(t *testing.T) {
		a := clustertest.NewLock(t, "fair", c, locks.Options{TTL: 10 * time.Second})
		b := clustertest.NewLock(t, "fair", c, locks.Options{TTL: 10 * time.Second})
		first, err := a.Acquire(ctx, "re")
		require.NoError(t, err)
		again, err := a.Acquire(ctx, "re")
		require.NoError(t, err)
		require.Same(t, first, again)
		require.Equal(t, "2", rdb.HGet(ctx, "re", first.Token).Val())
		require.ErrorIs(t, b.Release(ctx, first), locks.ErrNotHeld)
		require.NoError(t, a.Release(ctx, first))
		require.Equal(t, "1", rdb.HGet(ctx, "re", first.Token).Val())
		require.NoError(t, a.Release(ctx, first))
		require.Equal(t, int64(0), rdb.Exists(ctx, "re").Val())
	})

	t.Run("FIFO", func(t *testing.T) {
		ttl := 10 * time.Second
		holder := clustertest.NewLock(t, "fair", c, locks.Options{TTL: ttl})
		held, err := holder.Acquire(ctx, "fifo")
		require.NoError(t, err)

		type grantRec struct {
			waiter int
			token  string
			seq    int64
		}
		var mu sync.Mutex
		var grants []grantRec
		var wg sync.WaitGroup
		for i := 0; i < 5; i++ {
			w := clustertest.NewLock(t, "fair", c, locks.Options{TTL: ttl, Wait: 2 * ttl})
			wg.Go(func() {
				l, err := w.Acquire(ctx, "fifo")
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				grants = append(grants, grantRec{i, l.Token, l.Seq})
				mu.Unlock()
				assert.NoError(t, w.Release(ctx, l))
			})
			// The next waiter starts only once this one stands in line.
			waitQueue(t, "fifo", int64(i+1))
		}
		queued := rdb.LRange(ctx, locks.FairQueueKey("fifo"), 0, -1).Val()
		require.NoError(t, holder.Release(ctx, held))
		wg.Wait()

		require.Len(t, grants, 5)
		for k, g := range grants {
			require.Equal(t, k, g.waiter, "grant %d went to waiter %d: not the order of arrival (%+v)", k, g.waiter, grants)
			require.Equal(t, queued[k], g.token, "grant %d is not the queue's %d-th owner", k, k)
			require.Equal(t, held.Seq+int64(k)+1, g.seq, "grant numbers must follow the queue")
		}
		require.Zero(t, queueLen("fifo"))
	})

	// The lock says once, after the reply that put it in line, that an
	// acquire stands in its queue; a try that is refused, and the
	// reentrant lock's waiting (no queue), never say so.
	t.Run("SaysWhenInLine", func(t *testing.T) {
		ttl := 10 * time.Second
		holder := clustertest.NewLock(t, "fair", c, locks.Options{TTL: ttl})
		held, err := holder.Acquire(ctx, "inline")
		require.NoError(t, err)
		var mu sync.Mutex
		said := map[string]int{}
		hook := func(who string) context.Context {
			return locks.WithQueued(ctx, func() {
				mu.Lock()
				defer mu.Unlock()
				said[who]++
			})
		}
		saidBy := func(who string) int {
			mu.Lock()
			defer mu.Unlock()
			return said[who]
		}

		try := clustertest.NewLock(t, "fair", c, locks.Options{TTL: ttl})
		_, err = try.Acquire(hook("try"), "inline")
		require.ErrorIs(t, err, locks.ErrNotAcquired)

		// A short TTL makes the waiter look again often while it waits.
		waiter := clustertest.NewLock(t, "fair", c, locks.Options{TTL: 200 * time.Millisecond, Wait: ttl})
		got := make(chan error, 1)
		go func() {
			l, err := waiter.Acquire(hook("waiter"), "inline")
			if err == nil {
				err = waiter.Release(ctx, l)
			}
			got <- err
		}()
		waitQueue(t, "inline", 1)
		require.Eventually(t, func() bool { return saidBy("waiter") == 1 }, 3*time.Second, 5*time.Millisecond)
		// Let it look again a few times (each look is a script run on the
		// node): still said once.
		looked := scriptRuns(t, rdb)
		require.Eventually(t, func() bool { return scriptRuns(t, rdb) >= looked+3 }, 30*time.Second, 5*time.Millisecond, "the waiter never looked again")
		require.NoError(t, holder.Release(ctx, held))
		require.NoError(t, <-got)
		require.Equal(t, 1, saidBy("waiter"))
		require.Zero(t, saidBy("try"), "a try never stands in line")

		reentrant := clustertest.NewLock(t, "reentrant", c, locks.Options{TTL: ttl})
		rheld, err := reentrant.Acquire(ctx, "inline-r")
		require.NoError(t, err)
		rwaiter := clustertest.NewLock(t, "reentrant", c, locks.Options{TTL: ttl, Wait: 300 * time.Millisecond})
		_, err = rwaiter.Acquire(hook("reentrant"), "inline-r")
		require.ErrorIs(t, err, locks.ErrNotAcquired)
		require.Zero(t, saidBy("reentrant"), "the reentrant lock keeps no line")
		require.NoError(t, reentrant.Release(ctx, rheld))
	})

	t.Run("WaiterGivesUp", func(t *testing.T) {
		ttl := 10 * time.Second
		holder := clustertest.NewLock(t, "fair", c, locks.Options{TTL: ttl})
		held, err := holder.Acquire(ctx, "giveup")
		require.NoError(t, err)

		// First in line, waits 300ms and gives up.
		impatient := clustertest.NewLock(t, "fair", c, locks.Options{TTL: ttl, Wait: 300 * time.Millisecond})
		gaveUp := make(chan error, 1)
		go func() {
			_, err := impatient.Acquire(ctx, "giveup")
			gaveUp <- err
		}()
		waitQueue(t, "giveup", 1)

		// Second in line, its caller goes away.
		cancelled := clustertest.NewLock(t, "fair", c, locks.Options{TTL: ttl, Wait: 2 * ttl})
		cctx, cancel := context.WithCancel(ctx)
		cancelledErr := make(chan error, 1)
		go func() {
			_, err := cancelled.Acquire(cctx, "giveup")
			cancelledErr <- err
		}()
		waitQueue(t, "giveup", 2)

		// Third in line, stays.
		patient := clustertest.NewLock(t, "fair", c, locks.Options{TTL: ttl, Wait: 2 * ttl})
		got := acquireLater(ctx, patient, "giveup")
		waitQueue(t, "giveup", 3)

		require.ErrorIs(t, <-gaveUp, locks.ErrNotAcquired)
		cancel()
		err = <-cancelledErr
		require.True(t, locks.Failed(err), "a cancelled waiter certainly did not acquire: %v", err)
		require.Equal(t, int64(1), queueLen("giveup"), "waiters that gave up must leave the queue")
		require.Equal(t, int64(1), rdb.ZCard(ctx, locks.FairTimeoutKey("giveup")).Val())

		released := time.Now()
		require.NoError(t, holder.Release(ctx, held))
		var r granted
		select {
		case r = <-got:
		case <-time.After(5 * time.Second):
			t.Fatal("the waiter left standing never got the lock: the ones that gave up still block it")
		}
		require.NoError(t, r.err)
		// Its fallback poll is the holder's TTL away: only the release's
		// wake-up comes this soon.
		require.Less(t, 5*r.at.Sub(released), ttl, "the release must wake the remaining waiter at once")
		require.NoError(t, patient.Release(ctx, r.lease))
		require.Zero(t, queueLen("giveup"))
	})

	t.Run("CancelledContext", func(t *testing.T) {
		l := clustertest.NewLock(t, "fair", c, locks.Options{TTL: 10 * time.Second, Wait: time.Second})
		left := func() bool {
			return rdb.Exists(ctx, "cancel", locks.FairQueueKey("cancel"), locks.FairTimeoutKey("cancel")).Val() != 0
		}
		cancelWhilePaused(t, l, "cancel", []*redis.Client{rdb}, false, left)
		cancelWhilePaused(t, l, "cancel", []*redis.Client{rdb}, true, left)
	})
}

// scriptRuns is how many scripts the node has run (EVAL and EVALSHA).
func scriptRuns(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(info, "\n") {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_eval" && name != "cmdstat_evalsha") {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(stats, "calls="), ",")
		c, err := strconv.Atoi(calls)
		require.NoError(t, err, line)
		n += c
	}
	return n
}
