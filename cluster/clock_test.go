package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
)

// A forward jump on one node expires a PX key there only: after +60 s a
// PX 30000 key is gone on the jumped node and alive on the other, and the
// node's TIME shows the jump. Setting the offset back to 0 restores TIME.
func TestClockJumpExpiresKeysOnOneNodeOnly(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 2, ClockFaults: true})
	ctx := context.Background()
	nodes := c.ByRole(cluster.RoleRedis)
	jumped, steady := nodes[0], nodes[1]
	for _, n := range nodes {
		rdb := n.Client()
		defer rdb.Close()
		require.NoError(t, rdb.Set(ctx, "k", "v", 30*time.Second).Err())
	}

	require.NoError(t, jumped.SetClock(ctx, 60*time.Second))
	require.Equal(t, 60*time.Second, jumped.Clock())
	jc, sc := jumped.Client(), steady.Client()
	defer jc.Close()
	defer sc.Close()
	require.Eventually(t, func() bool {
		return jc.Exists(ctx, "k").Val() == 0
	}, 10*time.Second, 50*time.Millisecond, "the key outlived a 60 s jump on its node")
	require.Equal(t, int64(1), sc.Exists(ctx, "k").Val(), "the other node's clock did not move")
	now, err := jumped.Now(ctx)
	require.NoError(t, err)
	require.InDelta(t, 60, time.Until(now).Seconds(), 5)

	require.NoError(t, jumped.SetClock(ctx, 0))
	require.Eventually(t, func() bool {
		now, err := jumped.Now(ctx)
		return err == nil && time.Until(now).Abs() < 5*time.Second
	}, 10*time.Second, 50*time.Millisecond, "the clock did not come back")
}

// Without ClockFaults the node runs without clockshift and refuses a jump.
func TestClockJumpNeedsClockFaults(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	require.ErrorContains(t, c.ByRole(cluster.RoleRedis)[0].SetClock(context.Background(), time.Minute), "without clock faults")
}
