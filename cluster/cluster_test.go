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

func TestIsolatePrimaryCausesSentinelFailover(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Sentinel})
	ctx := context.Background()

	old, err := c.Master(ctx)
	require.NoError(t, err)
	require.Equal(t, "redis-1", old.Name)

	// A write through the failover client lands on the current master.
	rdb := c.Clients(endpoints.DefaultClientOptions())[0]
	defer rdb.Close()
	require.NoError(t, rdb.Set(ctx, "k", "before", 0).Err())

	require.NoError(t, old.Isolate(ctx))
	// Clients still reach the isolated master through its published port.
	require.NoError(t, old.Ping(ctx))

	var promoted *cluster.Node
	require.Eventually(t, func() bool {
		promoted, err = c.Master(ctx)
		return err == nil && promoted.Name != old.Name
	}, time.Minute, 100*time.Millisecond, "Sentinel never promoted a replica")

	require.NoError(t, c.HealAll(ctx))
	require.NoError(t, c.WaitHealthy(ctx, 60*time.Second))
	now, err := c.Master(ctx)
	require.NoError(t, err)
	require.Equal(t, promoted.Name, now.Name, "the healed old master must rejoin as a replica")

	// The failover client follows the new master.
	require.Eventually(t, func() bool {
		return rdb.Set(ctx, "k", "after", 0).Err() == nil
	}, 10*time.Second, 100*time.Millisecond)
}

func TestKillAndStartKeepsPublishedPort(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	ctx := context.Background()
	n := c.ByRole(cluster.RoleRedis)[0]
	rdb := n.Client()
	defer rdb.Close()
	require.NoError(t, rdb.Set(ctx, "k", "v", 0).Err())

	port := n.HostPort
	require.NoError(t, n.Kill(ctx))
	require.Error(t, n.Ping(ctx))
	require.NoError(t, n.Heal(ctx))
	require.Equal(t, port, n.HostPort)
	require.NoError(t, n.Ping(ctx))
	// No persistence: the restarted node is empty.
	require.Equal(t, int64(0), rdb.Exists(ctx, "k").Val())
}

// A kill returns once the server is gone, and may leave Docker's teardown
// running: closing the cluster at once still removes everything.
func TestCloseRightAfterAKillRemovesEverything(t *testing.T) {
	clustertest.RequireDocker(t)
	ctx := context.Background()
	c, err := cluster.Start(ctx, cluster.Spec{Topology: cluster.Independent, Masters: 2})
	require.NoError(t, err)
	require.NoError(t, c.ByRole(cluster.RoleRedis)[0].Kill(ctx))
	require.NoError(t, c.Close(ctx))
	left, err := cluster.Leftovers(ctx, cluster.LabelRun+"="+c.Run)
	require.NoError(t, err)
	require.Empty(t, left)
}

func TestCloseRemovesEverything(t *testing.T) {
	clustertest.RequireDocker(t)
	ctx := context.Background()
	c, err := cluster.Start(ctx, cluster.Spec{Topology: cluster.Independent, Masters: 2})
	require.NoError(t, err)
	require.NoError(t, c.Close(ctx))
	left, err := cluster.Leftovers(ctx, cluster.LabelRun+"="+c.Run)
	require.NoError(t, err)
	require.Empty(t, left)
}

func TestBadSpec(t *testing.T) {
	_, err := cluster.Start(context.Background(), cluster.Spec{Topology: "ring"})
	require.ErrorContains(t, err, `unknown topology "ring"`)
}

func TestContextDeadlineBoundsACallToAStalledNode(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	ctx := context.Background()
	n := c.ByRole(cluster.RoleRedis)[0]
	admin := n.Client()
	defer admin.Close()
	// The node stalls, and the read timeout lasts, far longer than the
	// context: only the deadline can end the call well before either, so
	// the bound below leaves a loaded machine seconds of slack and still
	// fails when go-redis ignores the context.
	require.NoError(t, admin.Do(ctx, "CLIENT", "PAUSE", "20000", "ALL").Err())

	o := endpoints.DefaultClientOptions()
	o.ReadTimeout = 20 * time.Second
	rdb := c.Clients(o)[0]
	defer rdb.Close()
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	require.Error(t, rdb.Set(cctx, "k", "v", 0).Err())
	require.Less(t, time.Since(start), 5*time.Second, "the context deadline, not the node's pause or the 20s read timeout, must end the call")
}

// Heal asks Docker what is wrong with a node, so one call undoes faults
// of several kinds at once, whoever made them.
func TestHealUndoesEveryFaultANodeIsIn(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Sentinel})
	ctx := context.Background()
	m, err := c.Master(ctx)
	require.NoError(t, err)
	var replica *cluster.Node
	for _, n := range c.ByRole(cluster.RoleRedis) {
		if n.Name != m.Name {
			replica = n
		}
	}
	require.NoError(t, replica.Isolate(ctx))
	require.NoError(t, replica.Pause(ctx))
	require.Error(t, replica.Ping(ctx), "a paused node answers nothing")

	require.NoError(t, replica.Heal(ctx))
	require.NoError(t, replica.Ping(ctx))
	// Linked to its master again: the health check requires it.
	require.NoError(t, c.WaitHealthy(ctx, 60*time.Second))
	// A second heal finds nothing to do.
	require.NoError(t, replica.Heal(ctx))
	require.NoError(t, replica.Reconnect(ctx), "reconnecting a connected node is no error")
}
