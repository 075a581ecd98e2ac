package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
)

// A master started with min-replicas-to-write 1 refuses writes (NOREPLICAS,
// not applied) once its replicas are cut off for longer than the lag, and
// takes them again when they are back.
func TestMinReplicasToWriteRefusesWritesWithoutReplicas(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Sentinel,
		Replication: cluster.Replication{MinReplicasToWrite: 1, MinReplicasMaxLag: 1}})
	ctx := context.Background()
	master, err := c.Master(ctx)
	require.NoError(t, err)
	rdb := master.Client()
	defer rdb.Close()
	require.NoError(t, rdb.Set(ctx, "before", "1", 0).Err())

	clustertest.IsolateReplicas(t, c)
	var refused error
	require.Eventually(t, func() bool {
		refused = rdb.Set(ctx, "during", "1", 0).Err()
		return refused != nil
	}, 20*time.Second, 100*time.Millisecond, "the master kept taking writes without a replica")
	require.True(t, strings.HasPrefix(refused.Error(), "NOREPLICAS "), "refused with %v", refused)
	// The refusal comes before the command runs: nothing is applied.
	require.ErrorContains(t, rdb.Set(ctx, "refused", "1", 0).Err(), "NOREPLICAS")
	n, err := rdb.Exists(ctx, "refused").Result()
	require.NoError(t, err)
	require.Zero(t, n, "a write refused with NOREPLICAS was not applied")

	require.NoError(t, c.HealAll(ctx))
	require.NoError(t, c.WaitHealthy(ctx, 60*time.Second))
	now, err := c.Master(ctx)
	require.NoError(t, err)
	require.Equal(t, master.Name, now.Name, "no failover: only replicas were cut off")
	// Healthy means the write path works: a lock's write is taken at once.
	require.NoError(t, rdb.Set(ctx, "after", "1", 0).Err(), "healthy, yet the master refuses writes")

	// With fewer good replicas than it asks for, the master refuses every
	// write, and the cluster is not healthy, whatever its shape.
	require.NoError(t, rdb.ConfigSet(ctx, "min-replicas-to-write", "3").Err())
	require.ErrorContains(t, rdb.Set(ctx, "more", "1", 0).Err(), "NOREPLICAS")
	err = c.Healthy(ctx)
	require.ErrorContains(t, err, master.Name+" refuses writes: NOREPLICAS")
	require.NoError(t, rdb.ConfigSet(ctx, "min-replicas-to-write", "1").Err())
	require.NoError(t, c.Healthy(ctx))
}
