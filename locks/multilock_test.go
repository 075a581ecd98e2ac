package locks_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/locks"
)

func TestMultiLock(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 3})
	ctx := context.Background()
	nodes := []*redis.Client{nodeClient(t, c, 0), nodeClient(t, c, 1), nodeClient(t, c, 2)}
	// holders lists what each master has under key ("" when nothing).
	holders := func(key string) []string {
		var out []string
		for _, rdb := range nodes {
			out = append(out, rdb.Get(ctx, key).Val())
		}
		return out
	}

	t.Run("MutualExclusion", func(t *testing.T) {
		_, acquired := clustertest.Contend(t, c, "multilock", locks.Options{TTL: 10 * time.Second, Wait: 5 * time.Second}, 20)
		require.Greater(t, acquired, int64(6*20/2), "contention test made little progress")
		require.Equal(t, []string{"", "", ""}, holders("contended"))
	})

	t.Run("AllOrNothing", func(t *testing.T) {
		l := clustertest.NewLock(t, "multilock", c, locks.Options{TTL: 10 * time.Second})
		require.NoError(t, nodes[1].Set(ctx, "k", "someone-else", 10*time.Second).Err())
		_, err := l.Acquire(ctx, "k")
		require.ErrorIs(t, err, locks.ErrNotAcquired, "one master held by another: no lock")
		require.ErrorIs(t, err, locks.ErrUndone, "two masters were ours for a while")
		require.False(t, locks.Refused(err), "two masters were ours for a while: %v", err)
		require.Equal(t, []string{"", "someone-else", ""}, holders("k"), "the masters we took must be given back, the other holder kept")

		require.NoError(t, nodes[1].Del(ctx, "k").Err())
		start := time.Now()
		lease, err := l.Acquire(ctx, "k")
		require.NoError(t, err)
		require.Equal(t, []string{lease.Token, lease.Token, lease.Token}, holders("k"), "one token on every master")
		require.True(t, lease.Deadline.After(start) && lease.Deadline.Before(start.Add(10*time.Second)))
		require.NoError(t, l.Release(ctx, lease))
		require.Equal(t, []string{"", "", ""}, holders("k"))
	})

	t.Run("ReleaseNotHeld", func(t *testing.T) {
		l := clustertest.NewLock(t, "multilock", c, locks.Options{TTL: 10 * time.Second})
		lease, err := l.Acquire(ctx, "gone")
		require.NoError(t, err)
		require.NoError(t, nodes[2].Del(ctx, "gone").Err())
		err = l.Release(ctx, lease)
		require.Error(t, err, "one master lost it")
		require.False(t, locks.Failed(err), "deleting the other copies freed the key: the release took effect (%v)", err)
		require.Equal(t, []string{"", "", ""}, holders("gone"), "the release still cleans the other masters")
	})

	t.Run("CancelledContext", func(t *testing.T) {
		l := clustertest.NewLock(t, "multilock", c, locks.Options{TTL: 10 * time.Second})
		left := func() bool {
			for _, h := range holders("cancel") {
				if h != "" {
					return true
				}
			}
			return false
		}
		cancelWhilePaused(t, l, "cancel", nodes, false, left)
		cancelWhilePaused(t, l, "cancel", nodes, true, left)
	})
}
