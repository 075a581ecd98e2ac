package nemesis_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/nemesis/nemesistest"
)

// Until the run ends the schedule injects one fault after another, and
// each is healed before the next and before Run returns.
func TestRandomInjectsOneFaultAtATimeUntilTheRunEnds(t *testing.T) {
	c := nemesistest.StartWith(t, nemesistest.Options{Topology: cluster.Independent, Masters: 3})
	rec := history.NewRecorder(nil)
	n, err := nemesis.New("random", nemesis.Params{Faults: []string{"pause-node", "kill"}, Every: 100 * time.Millisecond, For: 300 * time.Millisecond})
	require.NoError(t, err)
	env := nemesis.Env{Cluster: c, HealthTimeout: 10 * time.Second, Rec: rec, Rng: rand.New(rand.NewPCG(7, 0)), TTL: time.Second}
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
		rdb := nemesistest.Client(t, node)
		require.NoError(t, rdb.Ping(context.Background()).Err(), node.Name())
		rdb.Close()
	}
}
