package scenarios

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/reports"
)

// --server picks the cluster's image before anything starts; an unknown
// name is refused with the known ones.
func TestServerPicksTheImage(t *testing.T) {
	sc, err := Get("failover-simple")
	require.NoError(t, err)
	prepared, err := sc.Prepare(RunOptions{Seed: 1, Overrides: []Override{SetServer("valkey-8.1")}})
	require.NoError(t, err)
	require.Equal(t, "deadbolt/valkey:8.1", prepared.Cluster.Image)
	spec, err := sc.ClusterSpec(RunOptions{Seed: 1, Overrides: []Override{SetServer("redis-8.0")}})
	require.NoError(t, err)
	require.Equal(t, "deadbolt/redis:8.0", spec.Image, "a pool keeps each server's clusters apart")
	_, err = sc.Prepare(RunOptions{Seed: 1, Overrides: []Override{SetServer("redis-6.2")}})
	require.ErrorContains(t, err, `unknown server "redis-6.2" (known: redis-7.0, redis-8.0, valkey-8.1)`)
}

// reports cannot import cluster, so it names the default server itself: a
// re-run's command line leaves out --server only for that one.
func TestReportsKnowsTheDefaultServer(t *testing.T) {
	require.Equal(t, cluster.Servers[0].Name, reports.DefaultServer)
}
