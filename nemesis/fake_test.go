package nemesis_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/nemesis/nemesistest"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// fakeEnv is a plan's environment on an in-memory cluster: no Docker.
func fakeEnv(t *testing.T, replicas int) (*nemesistest.Cluster, nemesis.Env, *history.Recorder) {
	c := nemesistest.Start(t, replicas)
	rec := history.NewRecorder(nil)
	return c, nemesis.Env{Cluster: c, Rec: rec, Rng: rand.New(rand.NewPCG(1, 2)), TTL: 100 * time.Millisecond, HealthTimeout: 10 * time.Second}, rec
}

// masterClient is a client of the fake's master now, closed with the test.
func masterClient(t *testing.T, c *nemesistest.Cluster) *redis.Client {
	t.Helper()
	m, err := c.Master(context.Background())
	require.NoError(t, err)
	rdb := nemesistest.Client(t, m)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// count is how many ops of the history have f and type typ.
func count(ops []history.Op, f history.F, typ history.Type) int {
	n := 0
	for _, op := range ops {
		if op.F == f && op.Type == typ {
			n++
		}
	}
	return n
}

// Node faults strike and heal on the fake as on containers: each is a
// window healed on its own clock, the cluster is healthy after the last
// heal, and every node answers again.
func TestPlanStrikesAndHealsNodeFaultsWithoutDocker(t *testing.T) {
	c, env, rec := fakeEnv(t, 2)
	n, err := nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{
		{Fault: "kill", Target: "node:redis-3", For: 300 * time.Millisecond},
		{Fault: "pause-node", Target: "node:redis-2", After: 50 * time.Millisecond, For: 100 * time.Millisecond},
	}})
	require.NoError(t, err)
	require.NoError(t, n.Run(context.Background(), env))

	ops := rec.Ops()
	ws := checker.FaultWindows(ops)
	require.Len(t, ws, 2)
	byNode := map[string]checker.FaultWindow{}
	for _, w := range ws {
		require.True(t, w.Healed, "%+v", w)
		byNode[w.Fault+" "+w.Node] = w
	}
	kill, pause := byNode["kill redis-3"], byNode["pause-node redis-2"]
	require.Less(t, pause.End, kill.End, "the pause healed inside the kill")
	require.Equal(t, 2, count(ops, history.FaultStart, history.OK))
	require.Equal(t, 2, count(ops, history.FaultEnd, history.OK))
	require.Equal(t, 1, count(ops, history.HealthAfter, history.OK), "one check, after the heal that left no fault in effect")
	_, err = history.Pair(ops)
	require.NoError(t, err)
	require.Empty(t, c.Failovers(), "no fault reached the master's peers")
	for _, node := range c.Nodes() {
		rdb := node.Client()
		require.NoError(t, rdb.Ping(context.Background()).Err(), node.Name())
		rdb.Close()
	}
}

// A step that waits for its failover sees the master replaced, and the
// promoted replica lacks what the old master never replicated: the
// classic lock loss, staged by the plan.
func TestPlanFailoverStepWithoutDocker(t *testing.T) {
	ctx := context.Background()
	c, env, rec := fakeEnv(t, 2)
	rdb := masterClient(t, c)
	require.True(t, rdb.SetNX(ctx, "lock", "first", time.Minute).Val())

	n, err := nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{
		{Fault: "isolate-primary", For: 50 * time.Millisecond, Until: nemesis.UntilFailover},
	}})
	require.NoError(t, err)
	require.NoError(t, n.Run(ctx, env))

	ops := rec.Ops()
	require.Zero(t, count(ops, history.FaultMissed, history.Fail), "the failover came")
	ws := checker.FaultWindows(ops)
	require.Len(t, ws, 1)
	require.Equal(t, "redis-1", ws[0].Node)
	require.True(t, ws[0].Healed)
	require.Equal(t, []string{"redis-1 -> redis-2"}, c.Failovers())
	nc := masterClient(t, c)
	require.True(t, nc.SetNX(ctx, "lock", "second", time.Minute).Val(), "the new master never had the first grant")
	// The old master rejoined as a replica and takes the new master's data.
	require.NoError(t, c.Sync())
	require.Equal(t, "second", rdb.Get(ctx, "lock").Val())
}

// A fault the fake cannot stage (miniredis has no CLIENT KILL) is recorded
// as failed, not pretended, and the run cannot pass.
func TestPlanRecordsAFaultTheFakeCannotStrike(t *testing.T) {
	_, env, rec := fakeEnv(t, 0)
	n, err := nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{
		{Fault: "kill-connections", Target: "primary"},
	}})
	require.NoError(t, err)
	require.ErrorContains(t, n.Run(context.Background(), env), "CLIENT KILL")
	require.NotEqual(t, checker.Valid, checker.Check(rec.Ops(), checker.Options{}).Verdict)
}

// A fault on clients finds the holder of a key through the workload's
// runner, on the fake cluster: the client held at its grant is paused
// past its lease, and another client is granted the key meanwhile (the
// classic process pause), then the victim is woken by the heal.
func TestPlanPausesTheHolderWithoutDocker(t *testing.T) {
	c := nemesistest.Start(t, 0)
	rec := history.NewRecorder(nil)
	ttl := 200 * time.Millisecond
	cfg := workloads.Config{
		Shape: workloads.Shape{Clients: 2, Keys: []string{"k"}, TTL: workloads.Duration(ttl), HoldMin: workloads.Duration(5 * time.Millisecond), HoldMax: workloads.Duration(10 * time.Millisecond), Pause: workloads.Duration(time.Millisecond)}, Seed: 1, Lock: "simple", Endpoints: c.Endpoints(), Driver: clienttest.Command(), Rec: rec,
	}
	r, err := workloads.NewRunner("mutex", cfg)
	require.NoError(t, err)
	n, err := nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{
		{Fault: "pause-client", Target: "holder", Key: "k", TTLs: 3},
	}})
	require.NoError(t, err)
	env := nemesis.Env{Cluster: c, Clients: r, Rec: rec, Rng: rand.New(rand.NewPCG(1, 1)), TTL: ttl, HealthTimeout: 10 * time.Second}
	nemesis.Stage(n, env)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background(), stop) }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, n.Run(ctx, env))
	close(stop)
	require.NoError(t, <-done)

	ops := rec.Ops()
	ws := checker.FaultWindows(ops)
	require.Len(t, ws, 1)
	w := ws[0]
	require.True(t, w.Healed)
	require.Contains(t, w.Node, "process ")
	other := false
	for _, op := range ops {
		if op.F == history.Acquire && op.Type == history.OK && op.Time > w.Start && op.Time < w.End {
			other = true
		}
	}
	require.True(t, other, "another client was granted k while the holder slept")
}

// A graceful failover asked of the fake's Sentinel replicates before it
// promotes: the new master has the grant the old one made, the legal
// look-alike of the lock loss above.
func TestPlanSentinelFailoverKeepsTheGrantWithoutDocker(t *testing.T) {
	ctx := context.Background()
	c, env, rec := fakeEnv(t, 2)
	rdb := masterClient(t, c)
	require.True(t, rdb.SetNX(ctx, "lock", "first", time.Minute).Val())

	n, err := nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{{Fault: "sentinel-failover", Target: "sentinel", For: 50 * time.Millisecond}}})
	require.NoError(t, err)
	require.NoError(t, n.Run(ctx, env))
	require.Equal(t, 1, count(rec.Ops(), history.FaultStart, history.OK))
	require.Equal(t, []string{"redis-1 -> redis-2"}, c.Failovers())
	nc := masterClient(t, c)
	require.False(t, nc.SetNX(ctx, "lock", "second", time.Minute).Val(), "the promoted replica had the grant")
	require.Equal(t, "first", nc.Get(ctx, "lock").Val())
}
