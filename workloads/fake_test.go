package workloads_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis/nemesistest"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// The workload's client processes take a real lock on the fake cluster's
// miniredis, no Docker: mutual exclusion holds and the checker passes the
// run.
func TestClientsAcquireOnTheFakeCluster(t *testing.T) {
	c := nemesistest.Start(t, 0)
	rec := history.NewRecorder(nil)
	cfg := workloads.Config{
		Shape: workloads.Shape{Clients: 3, Keys: []string{"a"}, TTL: workloads.Duration(2 * time.Second), HoldMin: workloads.Duration(time.Millisecond), HoldMax: workloads.Duration(5 * time.Millisecond), Pause: workloads.Duration(time.Millisecond)},
		Seed:  1, Lock: "simple", Endpoints: c.Endpoints(), Driver: clienttest.Command(), Rec: rec,
	}
	r, err := workloads.NewRunner("mutex", cfg)
	require.NoError(t, err)
	grants := 0
	tenth, cancel := rec.Watch(func(op history.Op) bool {
		if op.F == history.Acquire && op.Type == history.OK {
			grants++
		}
		return grants == 10
	})
	defer cancel()
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background(), stop) }()
	select {
	case <-tenth:
	case err := <-done:
		t.Fatalf("the workload ended before ten grants: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("fewer than ten grants in a minute")
	}
	close(stop)
	require.NoError(t, <-done)

	ops := rec.Ops()
	res := checker.Check(ops, checker.Options{})
	require.Equal(t, checker.Valid, res.Verdict, res.Reason)
}
