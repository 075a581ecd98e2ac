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
	require.Eventually(t, func() bool {
		return rdb.Set(ctx, "after", "1", 0).Err() == nil
	}, 20*time.Second, 100*time.Millisecond, "the master still refuses writes with its replicas back")
}
