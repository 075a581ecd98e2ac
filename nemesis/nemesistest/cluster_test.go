package nemesistest_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/nemesis/nemesistest"
	"github.com/deadbolt-lab/deadbolt/topology"
)

// startWithClient starts a fake cluster and connects to its master.
func startWithClient(t *testing.T, replicas int) (*nemesistest.Cluster, nemesis.Node, *redis.Client) {
	c := nemesistest.Start(t, replicas)
	m, err := c.Master(context.Background())
	require.NoError(t, err)
	rdb := nemesistest.Client(t, m)
	t.Cleanup(func() { rdb.Close() })
	return c, m, rdb
}

// releaseScript is the classic compare-and-delete release.
var releaseScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`)

// A lock granted on the master and failed over before it replicated is
// granted again by the promoted replica: two holders at once.
func TestFailoverBeforeReplicationLosesTheLock(t *testing.T) {
	ctx := context.Background()
	c := nemesistest.Start(t, 2)
	m, err := c.Master(ctx)
	require.NoError(t, err)
	first := nemesistest.Client(t, m)
	defer first.Close()
	ok, err := first.SetNX(ctx, "lock", "a", time.Minute).Result()
	require.NoError(t, err)
	require.True(t, ok, "the master grants the free lock")

	require.NoError(t, m.Isolate(ctx)) // fails the master over; the grant never replicated
	n, err := c.Master(ctx)
	require.NoError(t, err)
	require.NotEqual(t, m.Name(), n.Name())
	require.Equal(t, []string{"redis-1 -> redis-2"}, c.Failovers())
	second := nemesistest.Client(t, n)
	defer second.Close()
	ok, err = second.SetNX(ctx, "lock", "b", time.Minute).Result()
	require.NoError(t, err)
	require.True(t, ok, "the promoted replica never saw the grant, and grants it again")

	// Healed, the old master rejoins as a replica and loses its grant.
	require.NoError(t, m.Reconnect(ctx))
	v, err := first.Get(ctx, "lock").Result()
	require.NoError(t, err)
	require.Equal(t, "b", v)
}

// A lock replicated before the failover survives it, and the Lua release
// of its holder deletes it on the new master.
func TestReplicatedLockSurvivesFailover(t *testing.T) {
	ctx := context.Background()
	c, m, rdb := startWithClient(t, 1)
	require.True(t, rdb.SetNX(ctx, "lock", "a", time.Minute).Val())
	require.NoError(t, c.Sync())
	require.NoError(t, m.Kill(ctx))
	n, _ := c.Master(ctx)
	other := nemesistest.Client(t, n)
	defer other.Close()
	require.False(t, other.SetNX(ctx, "lock", "b", time.Minute).Val(), "the replica had the grant")
	got, err := releaseScript.Run(ctx, other, []string{"lock"}, "b").Int()
	require.NoError(t, err)
	require.Equal(t, 0, got, "not b's to release")
	got, err = releaseScript.Run(ctx, other, []string{"lock"}, "a").Int()
	require.NoError(t, err)
	require.Equal(t, 1, got)

	require.NoError(t, m.Start(ctx))
	require.NoError(t, c.WaitHealthy(ctx, 10*time.Second))
}

// Leases run out with wall time, as on Redis.
func TestLeaseExpires(t *testing.T) {
	ctx := context.Background()
	_, _, rdb := startWithClient(t, 0)
	require.True(t, rdb.SetNX(ctx, "lock", "a", 50*time.Millisecond).Val())
	require.Eventually(t, func() bool { return rdb.SetNX(ctx, "lock", "b", time.Minute).Val() }, 10*time.Second, 5*time.Millisecond)
}

// A paused node keeps its connection and answers nothing until it thaws;
// the reply then comes on the same connection.
func TestPausedNodeAnswersAfterResume(t *testing.T) {
	ctx := context.Background()
	c := nemesistest.Start(t, 0)
	m, _ := c.Master(ctx)
	rdb := m.(*nemesistest.Node).PatientClient() // the same connection across the pause
	defer rdb.Close()
	require.NoError(t, rdb.Set(ctx, "k", "v", 0).Err())
	require.NoError(t, m.Pause(ctx))
	got := make(chan string, 1)
	go func() { got <- rdb.Get(ctx, "k").Val() }()
	// It has not answered while paused: the health check sees it down.
	require.Error(t, c.WaitHealthy(ctx, 50*time.Millisecond))
	select {
	case v := <-got:
		t.Fatalf("a paused node answered %q", v)
	default:
	}
	require.NoError(t, m.Resume(ctx))
	select {
	case v := <-got:
		require.Equal(t, "v", v)
	case <-time.After(10 * time.Second):
		t.Fatal("no reply after the thaw")
	}
}

// The fake waits for a failover of its own down-after, not of Docker's
// default second, and for none on independent masters.
func TestFailoverWithinIsTheFakesOwn(t *testing.T) {
	require.Equal(t, topology.FailoverWithin(topology.Sentinel, 100*time.Millisecond), nemesistest.Start(t, 0).FailoverWithin())
	require.Zero(t, nemesistest.StartWith(t, nemesistest.Options{Topology: topology.Independent, Masters: 3}).FailoverWithin())
}
