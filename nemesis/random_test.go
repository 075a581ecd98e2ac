package nemesis

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/history"
)

// The seed fixes the sequence of faults, targets, lengths and sizes.
func TestRandomDrawsTheSameStepsFromTheSameSeed(t *testing.T) {
	n := &Random{P: Params{Faults: []string{"kill", "clock-jump", "link-delay", "pause-client"}}}
	ttl := time.Second
	draw := func(seed uint64) []Step {
		env := Env{Rng: rand.New(rand.NewPCG(seed, 0)), TTL: ttl}
		var steps []Step
		for range 40 {
			steps = append(steps, n.step(env))
		}
		return steps
	}
	a, b, c := draw(1), draw(1), draw(2)
	require.Equal(t, a, b)
	require.NotEqual(t, a, c)
	seen := map[string]bool{}
	for _, s := range a {
		seen[s.Fault] = true
		require.NoError(t, s.validate())
		require.GreaterOrEqual(t, s.For, ttl, "about twice the TTL, scaled by [0.5, 1.5)")
		require.LessOrEqual(t, s.For, 3*ttl)
		switch s.Fault {
		case "clock-jump":
			require.GreaterOrEqual(t, s.By.Abs(), ttl)
			require.LessOrEqual(t, s.By.Abs(), 3*ttl)
		case "link-delay":
			require.Equal(t, "link:*:minority", s.Target)
			require.GreaterOrEqual(t, s.By, ttl)
		case "pause-client":
			require.Equal(t, "client:*", s.Target, "a random pause needs no key")
		case "kill":
			require.Equal(t, "minority", s.Target)
		}
	}
	require.Len(t, seen, 4, "40 draws reach every fault")
}

func TestNeedsOfReadsTopologyClockAndLinks(t *testing.T) {
	need, err := NeedsOf("random", Params{Faults: []string{"clock-jump", "link-cut"}})
	require.NoError(t, err)
	require.Equal(t, Needs{ClockFaults: true, LinkFaults: true}, need)

	need, err = NeedsOf("plan", Params{Steps: []Step{{Fault: "pause-node", Target: "primary"}}})
	require.NoError(t, err)
	require.Equal(t, "sentinel|cluster", need.Topology, "only Sentinel and a Redis Cluster know a primary")
	require.False(t, need.Allows("independent"))

	need, err = NeedsOf("kill-minority", Params{})
	require.NoError(t, err)
	require.Equal(t, "independent", need.Topology)

	_, err = NeedsOf("random", Params{Faults: []string{"meteor"}})
	require.ErrorContains(t, err, `unknown fault "meteor"`)
	_, err = New("random", Params{})
	require.ErrorContains(t, err, "at least one fault")
}

// Until the run ends the schedule injects one fault after another, and
// each is healed before the next and before Run returns.
func TestRandomInjectsOneFaultAtATimeUntilTheRunEnds(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 3})
	rec := history.NewRecorder(nil)
	n, err := New("random", Params{Faults: []string{"pause-node", "kill"}, Every: 100 * time.Millisecond, For: 300 * time.Millisecond})
	require.NoError(t, err)
	env := Env{Cluster: OnDocker(c), Rec: rec, Rng: rand.New(rand.NewPCG(7, 0)), TTL: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	// End the run once three faults have started.
	go func() {
		for started := 0; started < 3; {
			got, stop := rec.Watch(func(op history.Op) bool { return op.F == history.FaultStart && op.Type == history.Invoke })
			<-got
			stop()
			started++
		}
		cancel()
	}()
	require.NoError(t, n.Run(ctx, env))

	pairs, err := history.Pair(rec.Ops())
	require.NoError(t, err)
	var starts, ends []history.Operation
	for _, p := range pairs {
		switch p.Invoke.F {
		case history.FaultStart:
			starts = append(starts, p)
		case history.FaultEnd:
			ends = append(ends, p)
		}
	}
	require.GreaterOrEqual(t, len(starts), 3)
	require.Equal(t, len(starts), len(ends), "every fault healed")
	for i := range ends {
		require.NotNil(t, ends[i].Complete)
		require.Equal(t, history.OK, ends[i].Complete.Type)
		if i+1 < len(starts) {
			require.Less(t, ends[i].Complete.Time, starts[i+1].Invoke.Time, "one fault at a time")
		}
	}
	for _, node := range c.ByRole(cluster.RoleRedis) {
		require.NoError(t, node.Ping(context.Background()))
	}
}
