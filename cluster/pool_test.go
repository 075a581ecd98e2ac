package cluster

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// requireDocker is clustertest.RequireDocker, which this package's own
// tests cannot import.
func requireDocker(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := Available(ctx); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but Docker is needed: %v", err)
		}
		t.Skipf("skipping: needs a Docker engine: %v", err)
	}
}

// requireGone checks that nothing of the cluster's run is left.
func requireGone(t *testing.T, c *Cluster) {
	t.Helper()
	left, err := Leftovers(context.Background(), LabelRun+"="+c.Run)
	require.NoError(t, err)
	require.Empty(t, left)
}

// A Sentinel cluster that ran through a failover, a killed Sentinel, a
// clock jump, a cut link, a changed setting, keys and a script, once reset
// by the pool, compares equal to a fresh cluster of its spec: health,
// roles, replication shape, configuration, each Sentinel's view, no keys.
func TestPoolResetSentinelEqualsFresh(t *testing.T) {
	requireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	spec := Spec{Topology: Sentinel, ClockFaults: true, LinkFaults: true, Resource: true}
	p := NewPool([]Spec{spec, spec, spec})
	defer func() { require.NoError(t, p.Close(context.Background())) }()

	c, o, err := p.Get(ctx, spec)
	require.NoError(t, err)
	require.False(t, o.Reused)
	fresh, err := c.Snapshot(ctx)
	require.NoError(t, err)

	// The run: data, a script, a setting, a clock, a link, a failover.
	for _, n := range []string{"redis-1", ResourceName} {
		node, err := c.Node(n)
		require.NoError(t, err)
		rdb := node.Client()
		require.NoError(t, rdb.Set(ctx, "k", "v", 0).Err())
		require.NoError(t, rdb.ScriptLoad(ctx, "return 1").Err())
		rdb.Close()
	}
	r3, _ := c.Node("redis-3")
	rdb := r3.Client()
	require.NoError(t, rdb.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err())
	rdb.Close()
	r2, _ := c.Node("redis-2")
	require.NoError(t, r2.SetClock(ctx, time.Hour))
	link, err := c.Link(0, "redis-1")
	require.NoError(t, err)
	require.NoError(t, link.Cut())
	s3, _ := c.Node("sentinel-3")
	require.NoError(t, s3.Kill(ctx))
	r1, _ := c.Node("redis-1")
	require.NoError(t, r1.Isolate(ctx))
	require.Eventually(t, func() bool {
		m, err := c.Master(ctx)
		return err == nil && m.Name != "redis-1"
	}, time.Minute, 200*time.Millisecond, "Sentinel fails redis-1 over")
	require.NoError(t, c.HealAll(ctx))
	require.NoError(t, c.WaitHealthy(ctx, time.Minute))
	ran, err := c.Snapshot(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, ran.Diff(fresh), "the run changed the cluster")
	require.NoError(t, p.Put(ctx, c, true))

	reused, o, err := p.Get(ctx, spec)
	require.NoError(t, err)
	require.True(t, o.Reused, "reset failed: %s", o.Fallback)
	require.Same(t, c, reused)
	other, o, err := p.Get(ctx, spec)
	require.NoError(t, err)
	require.False(t, o.Reused)
	defer p.Put(ctx, other, false)

	require.NoError(t, reused.Healthy(ctx))
	require.NoError(t, other.Healthy(ctx))
	got, err := reused.Snapshot(ctx)
	require.NoError(t, err)
	want, err := other.Snapshot(ctx)
	require.NoError(t, err)
	require.Equal(t, want.Redacted(), got.Redacted())
	require.Equal(t, "", got.Diff(fresh))
	require.Empty(t, link.Faults())
	now, err := r2.Now(ctx)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), now, time.Second)

	// Logs saved after the reset hold only what came after it.
	dir := t.TempDir()
	require.NoError(t, reused.SaveLogs(ctx, dir))
	log, err := os.ReadFile(dir + "/redis-1.log")
	require.NoError(t, err)
	require.NotContains(t, string(log), "Server initialized", "a reused node's log for the run starts at its reset")

	require.NoError(t, p.Put(ctx, reused, false))
	requireGone(t, reused)
}

// A Redis Cluster whose slot master failed over is not reset (its slot
// map changed): the pool removes it and starts a fresh one.
func TestPoolRedisClusterFallsBackAfterFailover(t *testing.T) {
	requireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	spec := Spec{Topology: RedisCluster, PrimaryKey: "k2"}
	p := NewPool([]Spec{spec, spec})
	defer func() { require.NoError(t, p.Close(context.Background())) }()

	c, _, err := p.Get(ctx, spec)
	require.NoError(t, err)
	m, err := c.Master(ctx)
	require.NoError(t, err)
	rs, err := c.Replicas(ctx)
	require.NoError(t, err)
	rdb := rs[0].Client()
	require.NoError(t, rdb.Do(ctx, "CLUSTER", "FAILOVER").Err())
	rdb.Close()
	require.Eventually(t, func() bool {
		now, err := c.Master(ctx)
		return err == nil && now.Name != m.Name
	}, time.Minute, 200*time.Millisecond, "the replica takes over")
	require.NoError(t, c.WaitHealthy(ctx, spec.HealthTimeout()))
	require.NoError(t, p.Put(ctx, c, true))

	next, o, err := p.Get(ctx, spec)
	require.NoError(t, err)
	require.False(t, o.Reused)
	require.Contains(t, o.Fallback, "changed shape")
	require.NotSame(t, c, next)
	requireGone(t, c)
	require.NoError(t, next.Healthy(ctx))
	require.NoError(t, p.Put(ctx, next, true)) // no Get wants it: removed
	requireGone(t, next)
}
