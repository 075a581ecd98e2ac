package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/nemesis/nemesistest"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// The test binary serves the client protocol when started as a client
// (clienttest.Command), with this module's lock registered beside
// deadbolt's.
func TestMain(m *testing.M) { clienttest.Main(m) }

// The fault strikes a node of the public fake cluster, no Docker: a window
// in the history, opened ok and, instant, closed at once, with the effects
// it declares recorded on it; the node answers after.
func TestStutterStrikesTheFakeCluster(t *testing.T) {
	c := nemesistest.Start(t, 0)
	rec := history.NewRecorder(nil)
	n, err := nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{{Fault: "stutter", Target: "node:redis-1", By: 50 * time.Millisecond}}})
	require.NoError(t, err)
	env := nemesis.Env{Cluster: c, Rec: rec, Rng: rand.New(rand.NewPCG(1, 0)), TTL: time.Second, HealthTimeout: 10 * time.Second}
	require.NoError(t, n.Run(context.Background(), env))
	ws := checker.FaultWindows(rec.Ops())
	require.Len(t, ws, 1)
	require.Equal(t, "stutter", ws[0].Fault)
	require.True(t, ws[0].Healed)
	require.True(t, ws[0].KeepsKeys(), "the checkers read what it declares")
	require.NoError(t, c.WaitHealthy(context.Background(), 10*time.Second))
}

// The workload runs real client processes (this test binary) with this
// module's lock on the fake cluster: every client takes the first key, and
// the checks pass the run.
func TestFirstKeyRunsTheLockOnTheFakeCluster(t *testing.T) {
	c := nemesistest.Start(t, 0)
	rec := history.NewRecorder(nil)
	cfg := workloads.Config{
		Shape: workloads.Shape{Clients: 3, Keys: []string{"a", "b"}, TTL: workloads.Duration(2 * time.Second),
			HoldMin: workloads.Duration(time.Millisecond), HoldMax: workloads.Duration(5 * time.Millisecond), Pause: workloads.Duration(time.Millisecond)},
		Seed: 1, Lock: "example-setnx", Endpoints: c.Endpoints(), Driver: clienttest.Command(), Rec: rec,
	}
	r, err := workloads.NewRunner("first-key", cfg)
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
	kind, err := workloads.Get("first-key")
	require.NoError(t, err)
	res := checker.Check(rec.Ops(), checker.Options{Checkers: kind.Judges()})
	require.Equal(t, checker.Valid, res.Verdict, res.Reason)
	for _, op := range rec.Ops() {
		if op.F == history.Acquire {
			require.Equal(t, "a", op.Key, "every client takes the first key")
		}
	}
}

// held is a history of one grant of k held from at to until (a renewal
// every second keeps it), and a release.
func held(until time.Duration) []history.Op {
	var ops []history.Op
	add := func(op history.Op) { op.Index = len(ops); ops = append(ops, op) }
	ms := func(d time.Duration) int64 { return int64(d) }
	add(history.Op{Type: history.Invoke, Time: 0, Process: 0, F: history.Acquire, Key: "k", Lease: "p0.1", TTL: ms(2 * time.Second)})
	add(history.Op{Type: history.OK, Time: ms(time.Millisecond), Process: 0, F: history.Acquire, Key: "k", Lease: "p0.1", Owner: "t", TTL: ms(2 * time.Second)})
	for at := time.Second; at < until; at += time.Second {
		add(history.Op{Type: history.Invoke, Time: ms(at), Process: 0, F: history.Renew, Key: "k", Lease: "p0.1", Via: history.ViaExtend})
		add(history.Op{Type: history.OK, Time: ms(at + time.Millisecond), Process: 0, F: history.Renew, Key: "k", Lease: "p0.1", Via: history.ViaExtend})
	}
	add(history.Op{Type: history.Invoke, Time: ms(until), Process: 0, F: history.Release, Key: "k", Lease: "p0.1"})
	add(history.Op{Type: history.OK, Time: ms(until + time.Millisecond), Process: 0, F: history.Release, Key: "k", Lease: "p0.1"})
	return ops
}

// The checker on hand-made histories: a hold renewed for twelve seconds is
// flagged; its legal look-alike, one renewed for five, is not.
func TestLongHoldsFlagsAHoldPastItsLimit(t *testing.T) {
	long := checker.Check(held(12*time.Second), checker.Options{Checkers: []string{"long-holds"}})
	require.Equal(t, checker.Invalid, long.Verdict, long.Reason)
	require.Len(t, long.Anomalies, 1)
	require.Equal(t, "long-hold", long.Anomalies[0].Kind)
	short := checker.Check(held(5*time.Second), checker.Options{Checkers: []string{"long-holds"}, MinAcquires: 1})
	require.Equal(t, checker.Valid, short.Verdict, short.Reason)
}

// The whole CLI with the four: this module's binary runs a scenario file
// naming its lock, workload and fault on real containers, its clients
// itself, and judges it with its checker.
func TestTheBinaryRunsAScenarioWithAllFour(t *testing.T) {
	if testing.Short() {
		t.Skip("runs containers")
	}
	clustertest.RequireDocker(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "extend")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	file := filepath.Join(dir, "s.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"scenario": "extend-example", "lock": "example-setnx", "workload": "first-key",
	  "cluster": {"topology": "independent", "masters": 1}, "nemesis": "plan",
	  "fault": {"steps": [{"fault": "stutter", "target": "node:redis-1", "after": "1s", "by": "200ms"}]},
	  "clients": 3, "keys": ["k0"], "ttl": "2s", "hold_min": "10ms", "hold_max": "50ms", "pause": "10ms", "time": "5s"}`), 0o644))
	store := filepath.Join(dir, "store")
	cmd := exec.Command(bin, "run", "--file", file, "--seed", "1", "--store", store)
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, string(out)) // valid, and unjudged: exit 0
	dirs, err := filepath.Glob(filepath.Join(store, "extend-example", "*"))
	require.NoError(t, err)
	require.Len(t, dirs, 1)
	res, err := reports.ReadResults(filepath.Join(dirs[0], reports.ResultsFile))
	require.NoError(t, err)
	require.Equal(t, "valid", res.Verdict, res.Reason)
	b, err := json.Marshal(res.Checks)
	require.NoError(t, err)
	require.Contains(t, string(b), `"long-holds"`, "its checker judged the run")
	require.Len(t, res.FaultWindows, 1)
	require.Equal(t, "stutter", res.FaultWindows[0].Fault)
}
