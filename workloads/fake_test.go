package workloads_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/cluster/fakecluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// runUntil drives a workload against the fake cluster until done holds on
// what it recorded, and returns the history read back from its JSON.
func runUntil(t *testing.T, name string, cfg workloads.Config, done func([]history.Op) bool) []history.Op {
	t.Helper()
	var buf bytes.Buffer
	rec := history.NewRecorder(&buf)
	cfg.Rec = rec
	r, err := workloads.NewRunner(name, cfg)
	require.NoError(t, err)
	stop := make(chan struct{})
	ended := make(chan error, 1)
	go func() { ended <- r.Run(context.Background(), stop) }()
	deadline := time.Now().Add(time.Minute)
	for !done(rec.Ops()) {
		require.True(t, time.Now().Before(deadline), "the workload never got there: %d ops", len(rec.Ops()))
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	require.NoError(t, <-ended)
	require.Empty(t, children(t), "no client process outlives its run")
	ops, err := history.Parse(&buf)
	require.NoError(t, err)
	pairs, err := history.Pair(ops)
	require.NoError(t, err)
	for _, p := range pairs {
		require.NotNil(t, p.Complete, "every operation completes when the workload stops: %+v", p.Invoke)
	}
	return ops
}

func fakeConfig(t *testing.T, lock string) (*fakecluster.Cluster, workloads.Config) {
	t.Helper()
	c, err := fakecluster.New(1)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c, workloads.Config{
		Clients: 4, Keys: []string{"a", "b"}, TTL: 5 * time.Second,
		HoldMin: time.Millisecond, HoldMax: 5 * time.Millisecond, Pause: time.Millisecond,
		Seed: 1, Lock: lock, Endpoints: c.MasterEndpoints(), Driver: clienttest.Command(),
	}
}

// Without Docker: real client processes run the counter workload under the
// simple lock against the fake cluster's master, and every increment lands.
func TestTheRunnersClientsIncrementUnderACorrectLockOnTheFake(t *testing.T) {
	_, cfg := fakeConfig(t, "simple")
	okWrites := func(ops []history.Op) bool { return count(ops, history.Write, history.OK, nil) >= 40 }
	ops := runUntil(t, "counter", cfg, okWrites)
	for _, k := range []string{"a", "b"} {
		writes := count(ops, history.Write, history.OK, func(op history.Op) bool { return op.Key == k })
		require.Positive(t, writes, "writes on %s", k)
		require.Equal(t, int64(writes), finalRead(t, ops, k), "every acknowledged increment of %s landed", k)
	}
	procs := map[int]bool{}
	for _, op := range ops {
		if op.F == history.Acquire && op.Type == history.OK {
			procs[op.Process] = true
		}
	}
	require.GreaterOrEqual(t, len(procs), 2, "more than one client held the lock")
}
