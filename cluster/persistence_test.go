package cluster_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
)

// A node killed with SIGKILL and started again comes back empty without
// persistence and with every acknowledged key with the AOF, whether it
// fsyncs always or every second: SIGKILL loses the process, not the
// kernel's page cache, so no container fault can tell the two apart.
func TestRestartKeepsKeysOnlyWithPersistence(t *testing.T) {
	for p, kept := range map[cluster.Persistence]bool{cluster.PersistNone: false, cluster.PersistEverySec: true, cluster.PersistAlways: true} {
		t.Run(string(p), func(t *testing.T) {
			c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1, Persistence: p})
			ctx := context.Background()
			n := c.ByRole(cluster.RoleRedis)[0]
			rdb := n.Client()
			defer rdb.Close()
			require.NoError(t, rdb.Set(ctx, "lock", "owner", 0).Err())
			require.NoError(t, n.Kill(ctx))
			require.NoError(t, n.Heal(ctx))
			require.NoError(t, n.Ping(ctx))
			after := n.Client() // the old connections died with the process
			defer after.Close()
			exists, err := after.Exists(ctx, "lock").Result()
			require.NoError(t, err)
			require.Equal(t, kept, exists == 1)
		})
	}
}

func TestUnknownPersistenceIsRejected(t *testing.T) {
	_, err := cluster.Start(context.Background(), cluster.Spec{Topology: cluster.Independent, Masters: 1, Persistence: "sometimes"})
	require.ErrorContains(t, err, `unknown persistence "sometimes"`)
}
