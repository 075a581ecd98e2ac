package fakecluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster/fakecluster"
	"github.com/deadbolt-lab/deadbolt/locks"
)

func start(t *testing.T, replicas int) *fakecluster.Cluster {
	t.Helper()
	c, err := fakecluster.New(replicas)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func lockOn(t *testing.T, c *fakecluster.Cluster) locks.Lock {
	t.Helper()
	l, err := locks.New("simple", c.MasterEndpoints(), locks.Options{TTL: time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { locks.Close(l) })
	return l
}

func client(t *testing.T, c *fakecluster.Cluster, node string) *redis.Client {
	t.Helper()
	addr, err := c.Addr(node)
	require.NoError(t, err)
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// A failover before the grant reached a replica loses it: the promoted
// replica grants the same key again, and two clients hold it at once.
func TestAFailoverBeforeReplicationLosesAGrant(t *testing.T) {
	ctx := context.Background()
	c := start(t, 1)
	first, err := lockOn(t, c).Acquire(ctx, "k")
	require.NoError(t, err)

	require.NoError(t, c.Failover(""))
	m, err := c.Master(ctx)
	require.NoError(t, err)
	require.Equal(t, "redis-2", m.Name)
	second, err := lockOn(t, c).Acquire(ctx, "k")
	require.NoError(t, err, "the new master never saw the first grant")
	require.NotEqual(t, first.Token, second.Token)
}

// After a Sync the replica has the grant, with its TTL: a failover keeps it.
func TestAFailoverAfterReplicationKeepsTheGrant(t *testing.T) {
	ctx := context.Background()
	c := start(t, 1)
	_, err := lockOn(t, c).Acquire(ctx, "k")
	require.NoError(t, err)
	require.NoError(t, c.Sync())
	require.NoError(t, c.Failover("redis-2"))
	_, err = lockOn(t, c).Acquire(ctx, "k")
	require.ErrorIs(t, err, locks.ErrNotAcquired)
	ttl := client(t, c, "redis-2").PTTL(ctx, "k").Val()
	require.True(t, ttl > 0 && ttl <= time.Minute, "replicated TTL %v", ttl)
}

// A paused node answers nothing until it is resumed; the request then
// completes.
func TestAPausedNodeAnswersOnlyOnceResumed(t *testing.T) {
	ctx := context.Background()
	c := start(t, 0)
	rdb := client(t, c, "redis-1")
	require.NoError(t, rdb.Ping(ctx).Err()) // connected before the pause
	require.NoError(t, c.Pause("redis-1"))
	done := make(chan error, 1)
	go func() { done <- rdb.Set(ctx, "k", "v", 0).Err() }()
	require.Error(t, c.WaitHealthy(ctx, 10*time.Millisecond), "a paused node is not healthy")
	select {
	case err := <-done:
		t.Fatalf("a paused node answered: %v", err)
	default:
	}
	require.NoError(t, c.Resume("redis-1"))
	require.NoError(t, <-done)
	require.NoError(t, c.WaitHealthy(ctx, time.Minute))
}

// A killed node refuses connections and comes back empty.
func TestAKilledNodeForgetsItsKeys(t *testing.T) {
	ctx := context.Background()
	c := start(t, 0)
	rdb := client(t, c, "redis-1")
	require.NoError(t, rdb.Set(ctx, "k", "v", 0).Err())
	require.NoError(t, c.Kill("redis-1"))
	require.Error(t, rdb.Get(ctx, "k").Err())
	require.NoError(t, c.Start("redis-1"))
	err := rdb.Get(ctx, "k").Err()
	require.True(t, errors.Is(err, redis.Nil), "a restarted node without persistence has no keys: %v", err)
}

// An isolated master cannot replicate, and an isolated replica is never
// promoted.
func TestAnIsolatedNodeTakesNoPartInReplicationOrFailover(t *testing.T) {
	c := start(t, 1)
	require.NoError(t, c.Isolate("redis-1"))
	require.Error(t, c.Sync())
	require.NoError(t, c.Reconnect("redis-1"))
	require.NoError(t, c.Isolate("redis-2"))
	require.Error(t, c.Failover(""))
	require.NoError(t, c.Reconnect("redis-2"))
	require.NoError(t, c.Failover(""))
}
