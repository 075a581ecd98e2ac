package nemesis

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/cluster/fakecluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/locks"
)

var _ Cluster = (*fakecluster.Cluster)(nil)

// The catalogue's node faults act on containers; these act on the fake
// cluster's nodes, so that a plan runs, strikes, heals and records without
// Docker. They are in the catalogue only for the test that adds them.
func withFakeFaults(t *testing.T) {
	t.Helper()
	each := func(ctx context.Context, env Env, t Target, do func(*fakecluster.Cluster, string) error) error {
		fc := env.Cluster.(*fakecluster.Cluster)
		for _, n := range t.Nodes {
			if err := do(fc, n.Name); err != nil {
				return err
			}
		}
		return nil
	}
	add := map[string]faultEntry{
		"fake-pause": {target: "primary", fault: FaultFunc(func(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
			heal := func(ctx context.Context) error { return each(ctx, env, t, (*fakecluster.Cluster).Resume) }
			return heal, each(ctx, env, t, (*fakecluster.Cluster).Pause)
		})},
		"fake-failover": {target: "primary", fault: FaultFunc(func(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
			return nil, env.Cluster.(*fakecluster.Cluster).Failover("")
		})},
	}
	for name, e := range add {
		faults[name] = e
	}
	t.Cleanup(func() {
		for name := range add {
			delete(faults, name)
		}
	})
}

func fakeEnv(t *testing.T) (*fakecluster.Cluster, Env, *history.Recorder) {
	t.Helper()
	withFakeFaults(t)
	c, err := fakecluster.New(1)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	rec := history.NewRecorder(nil)
	return c, Env{Cluster: c, Rec: rec, Rng: rand.New(rand.NewPCG(1, 2)), TTL: time.Second, HealthTimeout: time.Minute}, rec
}

func healthChecks(ops []history.Op) (ok int) {
	for _, op := range ops {
		if op.F == history.HealthAfter && op.Type == history.OK {
			ok++
		}
	}
	return ok
}

// Without Docker: a plan resolves its target through the cluster
// interface, strikes, heals on its clock, records the window and checks
// the cluster's health after the heal.
func TestAPlanStrikesAndHealsOnTheFakeCluster(t *testing.T) {
	c, env, rec := fakeEnv(t)
	n, err := New("plan", Params{Steps: []Step{{Fault: "fake-pause", Target: "primary", For: 100 * time.Millisecond}}})
	require.NoError(t, err)
	require.NoError(t, n.Run(context.Background(), env))

	ws := checker.FaultWindows(rec.Ops())
	require.Len(t, ws, 1)
	require.Equal(t, "fake-pause", ws[0].Fault)
	require.Equal(t, "redis-1", ws[0].Node)
	require.True(t, ws[0].Healed)
	require.Less(t, ws[0].Start, ws[0].End)
	require.Equal(t, 1, healthChecks(rec.Ops()), "one health check, after the heal")
	require.NoError(t, c.WaitHealthy(context.Background(), time.Minute), "the heal resumed the node")
	_, err = history.Pair(rec.Ops())
	require.NoError(t, err)
}

// The lock loss deadbolt is about, staged by a plan: a failover promotes a
// replica that never saw a grant, the same key is granted again, and the
// plan's next step finds the new primary.
func TestAPlannedFailoverLosesAGrantOnTheFakeCluster(t *testing.T) {
	c, env, rec := fakeEnv(t)
	ctx := context.Background()
	lockOn := func() locks.Lock {
		l, err := locks.New("simple", c.MasterEndpoints(), locks.Options{TTL: time.Minute})
		require.NoError(t, err)
		t.Cleanup(func() { locks.Close(l) })
		return l
	}
	first, err := lockOn().Acquire(ctx, "k")
	require.NoError(t, err)

	n, err := New("plan", Params{Steps: []Step{
		{Fault: "fake-failover", Target: "primary"},
		{Fault: "fake-pause", Target: "primary", After: 300 * time.Millisecond, For: 100 * time.Millisecond},
	}})
	require.NoError(t, err)
	require.NoError(t, n.Run(ctx, env))

	ws := checker.FaultWindows(rec.Ops())
	require.Len(t, ws, 2)
	require.Equal(t, "redis-1", ws[0].Node, "the failover struck the old primary")
	require.Equal(t, "redis-2", ws[1].Node, "the pause found the promoted replica as primary")
	second, err := lockOn().Acquire(ctx, "k")
	require.NoError(t, err, "the promoted replica grants a key the old master had granted")
	require.NotEqual(t, first.Token, second.Token)
}
