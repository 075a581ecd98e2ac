package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/endpoints"
)

// A cluster client outside Docker follows the slot map the nodes announce by
// name; isolating the key's slot master makes the cluster promote its
// replica, and the healed old master rejoins as a replica.
func TestIsolatedSlotMasterIsReplacedByItsReplica(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.RedisCluster, PrimaryKey: "k0"})
	ctx := context.Background()
	require.Len(t, c.ByRole(cluster.RoleRedis), 6)

	rdb := c.Clients(endpoints.DefaultClientOptions())[0]
	defer rdb.Close()
	// Keys on every shard: the client must reach all three masters.
	for _, k := range []string{"k0", "k1", "k2", "k3", "k4", "k5", "k6"} {
		require.NoError(t, rdb.Set(ctx, k, "before", 0).Err(), k)
	}

	old, err := c.Master(ctx)
	require.NoError(t, err)
	replicas, err := c.Replicas(ctx)
	require.NoError(t, err)
	require.Len(t, replicas, 1)

	require.NoError(t, old.Isolate(ctx))
	require.NoError(t, old.Ping(ctx), "clients still reach the isolated master")
	var promoted *cluster.Node
	require.Eventually(t, func() bool {
		promoted, err = c.Master(ctx)
		return err == nil && promoted.Name != old.Name
	}, time.Minute, 100*time.Millisecond, "the cluster never promoted a replica")
	require.Equal(t, replicas[0].Name, promoted.Name)

	// Healed at the promotion, the old master may keep cluster-bus links
	// that outlived the cut unanswered, and answer CLUSTERDOWN for about
	// 50 s (seen twice by hand), more than a minute once.
	require.NoError(t, c.HealAll(ctx))
	require.NoError(t, c.WaitHealthy(ctx, 3*time.Minute))
	now, err := c.Master(ctx)
	require.NoError(t, err)
	require.Equal(t, promoted.Name, now.Name)
	back, err := c.Replicas(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{old.Name}, []string{back[0].Name}, "the old master rejoins as the new one's replica")

	require.Eventually(t, func() bool {
		return rdb.Set(ctx, "k0", "after", 0).Err() == nil
	}, 10*time.Second, 100*time.Millisecond)
}

func TestAClusterTooSmallToFailOverIsRefused(t *testing.T) {
	_, err := cluster.Start(context.Background(), cluster.Spec{Topology: cluster.RedisCluster, Masters: 2})
	require.ErrorContains(t, err, "at least 3 masters")
}
