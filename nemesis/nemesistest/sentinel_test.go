package nemesistest_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/nemesis/nemesistest"
	"github.com/deadbolt-lab/deadbolt/topology"
)

// A go-redis FailoverClient finds the master through the fake Sentinel and
// follows a failover: the isolated old master still answers its clients,
// so only the +switch-master announcement moves the client's connections
// to the promoted replica.
func TestFailoverClientFollowsAFakeFailover(t *testing.T) {
	ctx := context.Background()
	c := nemesistest.Start(t, 2)
	e := c.Endpoints()
	require.Equal(t, topology.Sentinel, e.Topology)
	rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: e.MasterName, SentinelAddrs: e.Sentinels, Dialer: e.Dialer().Dial, MaxRetries: -1})
	defer rdb.Close()
	require.NoError(t, rdb.Set(ctx, "k", "before", 0).Err())
	old, err := c.Master(ctx)
	require.NoError(t, err)
	require.Equal(t, "redis-1", old.Name())
	oc := nemesistest.Client(t, old)
	defer oc.Close()
	require.Equal(t, "before", oc.Get(ctx, "k").Val(), "the client wrote to the master Sentinel named")

	require.NoError(t, old.Isolate(ctx))
	now, err := c.Master(ctx)
	require.NoError(t, err)
	require.Equal(t, "redis-2", now.Name())
	nc := nemesistest.Client(t, now)
	defer nc.Close()
	require.Eventually(t, func() bool {
		return rdb.Set(ctx, "k", "after", 0).Err() == nil && nc.Get(ctx, "k").Val() == "after"
	}, 10*time.Second, 10*time.Millisecond, "the client's writes reach the promoted replica")
	// Switched, every write goes to the new master, none to the old.
	for i := range 20 {
		require.NoError(t, rdb.Set(ctx, "later", i, 0).Err())
	}
	require.Equal(t, "19", nc.Get(ctx, "later").Val())
	require.Zero(t, oc.Exists(ctx, "later").Val(), "the isolated old master no longer takes its writes")
}

// The fake Sentinel names the master, its replicas and no other Sentinel,
// and follows a failover.
func TestFakeSentinelAnswersTheGroupsRoles(t *testing.T) {
	ctx := context.Background()
	c := nemesistest.Start(t, 2)
	e := c.Endpoints()
	s := redis.NewSentinelClient(&redis.Options{Addr: e.Sentinels[0], Dialer: e.Dialer().Dial})
	defer s.Close()
	require.Equal(t, []string{"redis-1", "6379"}, s.GetMasterAddrByName(ctx, topology.MasterName).Val())
	names := func() []string {
		rs, err := s.Replicas(ctx, topology.MasterName).Result()
		require.NoError(t, err)
		var out []string
		for _, r := range rs {
			out = append(out, r["ip"]+":"+r["port"]+" "+r["flags"])
		}
		return out
	}
	require.Equal(t, []string{"redis-2:6379 slave", "redis-3:6379 slave"}, names())
	ss, err := s.Sentinels(ctx, topology.MasterName).Result()
	require.NoError(t, err)
	require.Empty(t, ss)
	require.Error(t, s.GetMasterAddrByName(ctx, "other").Err(), "one group only")

	m, _ := c.Master(ctx)
	require.NoError(t, m.Kill(ctx))
	require.Equal(t, []string{"redis-2", "6379"}, s.GetMasterAddrByName(ctx, topology.MasterName).Val())
	require.Equal(t, []string{"redis-1:6379 slave", "redis-3:6379 slave"}, names())
}
