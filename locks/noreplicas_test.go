package locks_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// A master with min-replicas-to-write 1 and its replicas cut off refuses
// every lock's write with NOREPLICAS before running it: the acquire is a
// certain failure (fail, not info) and no refusal (the key is free), and
// nothing is left on the master. A release refused the same way certainly
// had no effect: the key stays until its TTL.
func TestNoReplicasIsACertainFailedAcquire(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Sentinel,
		Replication: cluster.Replication{MinReplicasToWrite: 1, MinReplicasMaxLag: 1}})
	ctx := context.Background()
	master, err := c.Master(ctx)
	require.NoError(t, err)
	rdb := master.Client()
	defer rdb.Close()
	o := locks.Options{TTL: 20 * time.Second}
	names := []string{"simple", "fenced", "simple-wait", "reentrant", "fair", "setnx-expire", "bsm"}
	// Each lock takes a key before the cut, to release it after.
	lockOf, held := map[string]locks.Lock{}, map[string]*locks.Lease{}
	for _, name := range names {
		lockOf[name] = clustertest.NewLock(t, name, c, o)
		l, err := lockOf[name].Acquire(ctx, "held-"+name)
		require.NoError(t, err, name)
		held[name] = l
	}

	clustertest.IsolateReplicas(t, c)
	require.Eventually(t, func() bool {
		return locks.NoReplicas(rdb.Set(ctx, "probe", "1", 0).Err())
	}, 20*time.Second, 100*time.Millisecond, "the master kept taking writes without a replica")

	for _, name := range names {
		lock := clustertest.NewLock(t, name, c, o)
		key := "free-" + name
		_, err := lock.Acquire(ctx, key)
		require.Error(t, err, name)
		require.True(t, locks.NoReplicas(err), "%s: %v", name, err)
		require.True(t, locks.Failed(err), "%s: NOREPLICAS is a certain failure, got %v", name, err)
		require.False(t, locks.Refused(err), "%s: the key was free, got %v", name, err)
		n, err := rdb.Exists(ctx, key, key+locks.FenceSuffix).Result()
		require.NoError(t, err)
		require.Zero(t, n, "%s left something behind", name)
	}
	// Locks whose release is one command or script.
	for _, name := range []string{"simple", "fenced", "reentrant", "fair", "bsm"} {
		err := lockOf[name].Release(ctx, held[name])
		require.True(t, locks.NoReplicas(err), "%s: %v", name, err)
		require.ErrorIs(t, err, locks.ErrNoEffect, name)
		n, err := rdb.Exists(ctx, "held-"+name).Result()
		require.NoError(t, err)
		require.EqualValues(t, 1, n, "%s: a refused release deleted nothing", name)
	}
	require.NoError(t, c.HealAll(ctx))
}
