package workloads_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/cluster/fakecluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// runUntil drives a workload until done holds on what it recorded.
func runUntil(t *testing.T, name string, cfg workloads.Config, done func([]history.Op) bool) []history.Op {
	t.Helper()
	return drive(t, name, cfg, nil, func(rec *history.Recorder) {
		deadline := time.Now().Add(time.Minute)
		for !done(rec.Ops()) {
			require.True(t, time.Now().Before(deadline), "the workload never got there: %d ops", len(rec.Ops()))
			time.Sleep(5 * time.Millisecond)
		}
	})
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
