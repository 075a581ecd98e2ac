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

// TestSimpleWait shares one master + replica across its steps, in order:
// the steps that break replication come last.
func TestSimpleWait(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Sentinel, Replicas: 1, Sentinels: 1, Quorum: 1})
	ctx := context.Background()
	master, err := c.Node("redis-1")
	require.NoError(t, err)
	replica, err := c.Node("redis-2")
	require.NoError(t, err)
	onMaster, onReplica := master.Client(), replica.Client()
	t.Cleanup(func() { onMaster.Close(); onReplica.Close() })
	o := locks.Options{TTL: 10 * time.Second}

	// rolledBack checks a refused acquire: ErrNotAcquired for the reason
	// given, and no key left on the master.
	rolledBack := func(t *testing.T, l locks.Lock, key, why string) {
		t.Helper()
		_, err := l.Acquire(ctx, key)
		require.ErrorIs(t, err, locks.ErrNotAcquired)
		require.ErrorContains(t, err, why)
		require.ErrorIs(t, onMaster.Get(ctx, key).Err(), redis.Nil, "the refused acquire must be rolled back")
	}

	t.Run("replica acknowledges", func(t *testing.T) {
		l := clustertest.NewLock(t, "simple-wait", c, o)
		lease, err := l.Acquire(ctx, "acked")
		require.NoError(t, err)
		// WAIT returned >= 1: the replica has applied the SET already.
		v, err := onReplica.Get(ctx, "acked").Result()
		require.NoError(t, err)
		require.Equal(t, lease.Token, v)
		_, err = l.Acquire(ctx, "acked")
		require.ErrorIs(t, err, locks.ErrNotAcquired)
		require.NoError(t, l.Release(ctx, lease))
	})

	t.Run("more replicas asked than exist", func(t *testing.T) {
		l, err := locks.NewSimpleWait(2)(c.Endpoints(), o)
		require.NoError(t, err)
		t.Cleanup(func() { locks.Close(l) })
		rolledBack(t, l, "two", "1 of 2 replicas acknowledged")
	})

	t.Run("replica isolated", func(t *testing.T) {
		require.NoError(t, replica.Isolate(ctx))
		l := clustertest.NewLock(t, "simple-wait", c, o)
		rolledBack(t, l, "isolated", "0 of 1 replicas acknowledged")
	})

	t.Run("replica killed", func(t *testing.T) {
		for _, n := range c.ByRole(cluster.RoleRedis) {
			if n.Name != master.Name {
				require.NoError(t, n.Kill(ctx))
			}
		}
		l := clustertest.NewLock(t, "simple-wait", c, o)
		rolledBack(t, l, "killed", "0 of 1 replicas acknowledged")
		// simple, on the same master, does not care.
		s := clustertest.NewLock(t, "simple", c, o)
		lease, err := s.Acquire(ctx, "killed")
		require.NoError(t, err)
		require.NoError(t, s.Release(ctx, lease))
	})
}
