package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/nemesis/nemesistest"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// runOnFake runs failover-simple, shrunk to seconds, with step as its
// fault, through the phases of a run (clients through the Sentinel,
// faults, heal, convergence, settle) on an in-memory cluster, and judges
// its history: no Docker.
func runOnFake(t *testing.T, step nemesis.Step) checker.Report {
	t.Helper()
	s, err := Get("failover-simple")
	require.NoError(t, err)
	step.WaitKey, step.WaitSlot = "k0", nemesis.AnySlot // at a grant of k0, its client held there while the fault strikes
	s.Fault = nemesis.Params{Steps: []nemesis.Step{step}}
	s.Clients, s.Keys, s.MinAcquires = 4, []string{"k0"}, 3
	s.TTL, s.HoldMin, s.HoldMax, s.Pause = Duration(2*time.Second), Duration(1200*time.Millisecond), Duration(1500*time.Millisecond), Duration(20*time.Millisecond)
	s.Time, s.Settle = Duration(3*time.Second), Duration(time.Second)
	r, err := s.newRun(RunOptions{Seed: 1, Store: t.TempDir(), Driver: clienttest.Command(), Log: t.Logf})
	require.NoError(t, err)

	c := nemesistest.StartWith(t, nemesistest.Options{Replicas: 2, DownAfter: 300 * time.Millisecond})
	r.on, r.dir, r.rec = c, t.TempDir(), history.NewRecorder(nil)
	r.runner, err = workloads.NewRunner(r.kind.Name, r.workloadConfig())
	require.NoError(t, err)
	r.nem, err = nemesis.New(r.s.Nemesis, r.s.Fault)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nerr, err := r.phases(ctx)
	require.NoError(t, err)
	require.NoError(t, nerr)
	// The nemesis healed its fault; the heal stage only checks health here.
	require.NoError(t, c.WaitHealthy(ctx, 10*time.Second))
	r.health = "ok"
	require.Equal(t, []string{"redis-1 -> redis-2"}, c.Failovers())
	return r.judge(r.rec.Ops(), nerr, "")
}

func kinds(r checker.Report) []string {
	var out []string
	for _, a := range r.Anomalies {
		out = append(out, a.Kind)
	}
	return out
}

// The classic lock loss under asynchronous replication: k0 granted on the
// master, the master cut off before its replicas had it, a replica
// promoted without it and granting k0 again while its first holder still
// holds. The checker finds the double hold.
func TestAFailoverToAnUnsyncedReplicaLosesTheLockOnTheFake(t *testing.T) {
	r := runOnFake(t, nemesis.Step{Fault: "isolate-primary", Target: "primary", For: 100 * time.Millisecond, Until: nemesis.UntilFailover})
	require.Equal(t, checker.Invalid, r.Verdict, r.Reason)
	require.Contains(t, kinds(r), checker.KindDoubleHold, r.Reason)
	require.NotContains(t, kinds(r), checker.KindPrecondition, r.Reason)
}

// The legal look-alike: the same grant and a failover, but a graceful one
// (SENTINEL FAILOVER) that promotes a replica only once it has caught up,
// so k0 survives on the new master and nobody else is granted it.
func TestAFailoverAfterSyncKeepsTheLockOnTheFake(t *testing.T) {
	r := runOnFake(t, nemesis.Step{Fault: "sentinel-failover", Target: "sentinel", For: 100 * time.Millisecond})
	require.Equal(t, checker.Valid, r.Verdict, r.Reason)
	require.NotContains(t, kinds(r), checker.KindDoubleHold)
}
