package nemesistest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/nemesis/nemesistest"
)

// Replicas refuse writes; a master cut off and replaced still takes them
// (it was not told), and refuses them once it rejoined as a replica.
func TestReplicasRefuseWritesAndAReplacedMasterOnlyOnceItKnows(t *testing.T) {
	ctx := context.Background()
	c := nemesistest.Start(t, 1)
	m, _ := c.Master(ctx)
	rs, _ := c.Replicas(ctx)
	rc := nemesistest.Client(t, rs[0])
	defer rc.Close()
	require.ErrorContains(t, rc.Set(ctx, "k", "v", time.Minute).Err(), "READONLY")
	require.ErrorContains(t, rc.Eval(ctx, `return redis.call("SET", KEYS[1], "v")`, []string{"k"}).Err(), "READONLY")
	require.NoError(t, rc.Ping(ctx).Err(), "reads and the rest still work")

	mc := nemesistest.Client(t, m)
	defer mc.Close()
	require.NoError(t, m.Isolate(ctx))
	require.Equal(t, []string{"redis-1 -> redis-2"}, c.Failovers())
	require.NoError(t, rc.Set(ctx, "k", "new", time.Minute).Err(), "the promoted replica takes writes")
	require.NoError(t, mc.Set(ctx, "k", "stale", time.Minute).Err(), "the cut-off old master does not know it was replaced")
	require.NoError(t, m.Reconnect(ctx))
	require.ErrorContains(t, mc.Set(ctx, "k", "late", time.Minute).Err(), "READONLY")
	require.Equal(t, "new", mc.Get(ctx, "k").Val(), "it took the new master's data")
}

// A graceful failover tells the old master, which refuses writes at once.
func TestAGracefulFailoverDemotesTheOldMasterAtOnce(t *testing.T) {
	ctx := context.Background()
	c := nemesistest.Start(t, 1)
	m, _ := c.Master(ctx)
	mc := nemesistest.Client(t, m)
	defer mc.Close()
	require.NoError(t, mc.Set(ctx, "k", "v", time.Minute).Err())
	require.NoError(t, c.GracefulFailover())
	require.ErrorContains(t, mc.Set(ctx, "k", "stale", time.Minute).Err(), "READONLY")
	require.Equal(t, "v", mc.Get(ctx, "k").Val())
}
