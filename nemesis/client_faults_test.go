package nemesis_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/nemesis/nemesistest"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

func TestMain(m *testing.M) { clienttest.Main(m) }

// faultRun runs workload w on lock, on a fake cluster of spec, for d with the fault name/p, and
// returns the history and the fault windows. during runs once the fault
// has started, with the victim's history process id.
func faultRun(t *testing.T, spec nemesistest.Options, w, lock, name string, p nemesis.Params, d time.Duration, during func(r *workloads.Runner, victim int)) ([]history.Op, []checker.FaultWindow) {
	t.Helper()
	return faultRunShaped(t, spec, w, lock, name, p, d, during, nil)
}

// faultRunShaped is faultRun with the workload's shape changed by shape.
func faultRunShaped(t *testing.T, spec nemesistest.Options, w, lock, name string, p nemesis.Params, d time.Duration, during func(r *workloads.Runner, victim int), shape func(*workloads.Config)) ([]history.Op, []checker.FaultWindow) {
	t.Helper()
	c := nemesistest.StartWith(t, spec)
	rec := history.NewRecorder(nil)
	ttl := 500 * time.Millisecond
	cfg := workloads.Config{
		Shape: workloads.Shape{Clients: 3, Keys: []string{"k"}, TTL: workloads.Duration(ttl), HoldMin: workloads.Duration(20 * time.Millisecond), HoldMax: workloads.Duration(60 * time.Millisecond), Pause: workloads.Duration(5 * time.Millisecond)}, Seed: 1, Lock: lock, Endpoints: c.Endpoints(), SlotEndpoints: c.EndpointsFor, Driver: clienttest.Command(), Rec: rec,
	}
	if shape != nil {
		shape(&cfg)
	}
	r, err := workloads.NewRunner(w, cfg)
	require.NoError(t, err)
	n, err := nemesis.New(name, p)
	require.NoError(t, err)
	started, cancel := rec.Watch(func(op history.Op) bool { return op.F == history.FaultStart && op.Type == history.OK })
	defer cancel()
	env := nemesis.Env{Cluster: c, Clients: r, Rec: rec, Rng: rand.New(rand.NewPCG(1, 1)), TTL: ttl, HealthTimeout: 10 * time.Second}
	nemesis.Stage(n, env)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background(), stop) }()
	nctx, ncancel := context.WithTimeout(context.Background(), d)
	defer ncancel()
	nerr := make(chan error, 1)
	go func() { nerr <- n.Run(nctx, env) }()
	select {
	case op := <-started:
		if during != nil {
			id, err := strconv.Atoi(strings.Fields(op.Node)[1])
			require.NoError(t, err, op.Node)
			during(r, id)
		}
	case <-nctx.Done():
		t.Fatal("the fault never started")
	}
	require.NoError(t, <-nerr)
	// The run carries on after the fault: some client takes the lock again,
	// and a paused victim, woken, completes what it sent while it slept (on
	// a loaded machine another client's grant may come first).
	require.Eventually(t, func() bool {
		ops := rec.Ops()
		ws := checker.FaultWindows(ops)
		if len(ws) == 0 {
			return false
		}
		granted := false
		for _, op := range ops {
			granted = granted || (op.F == history.Acquire && op.Type == history.OK && op.Time > ws[0].End)
		}
		return granted && (name != "pause-client" || len(wokenOps(ops, ws[0])) > 0)
	}, 10*time.Second, 10*time.Millisecond)
	close(stop)
	require.NoError(t, <-done)
	return rec.Ops(), checker.FaultWindows(rec.Ops())
}

// pause-client on the holder of k, the moment it read the resource: a real
// SIGSTOP (state T) lasting twice the TTL, healed with SIGCONT, after which
// the victim carries on under the same process id.
func TestPauseClientStopsTheHolderForLongerThanTheTTL(t *testing.T) {
	spec := nemesistest.Options{Topology: cluster.Independent, Masters: 1, Resource: true}
	ops, ws := faultRun(t, spec, "counter", "simple", "pause-client", nemesis.Params{Key: "k", On: history.Read}, 10*time.Second,
		func(r *workloads.Runner, victim int) {
			require.Equal(t, "T", r.Process(victim).State(), "a pause is a real SIGSTOP")
		})
	require.Len(t, ws, 1)
	w := ws[0]
	require.Equal(t, "pause-client", w.Fault)
	require.True(t, w.Healed)
	require.GreaterOrEqual(t, time.Duration(w.End-w.Start), time.Second, "twice the 500ms TTL")
	wrote := false
	for _, op := range wokenOps(ops, w) {
		wrote = wrote || op.F == history.Write // its write, sent into the pipe while it slept, lands after the pause
	}
	require.True(t, wrote, "the paused holder wrote after it woke")
}

// wokenOps are the operations a paused client completed once the heal
// began: the SIGCONT goes out after the fault-end is invoked, and the
// victim may complete its first one before the nemesis records the heal
// done, so the window's end is no bound.
func wokenOps(ops []history.Op, w checker.FaultWindow) []history.Op {
	victim, _ := strconv.Atoi(strings.Fields(w.Node)[1])
	heal := int64(-1)
	for _, op := range ops {
		if op.F == history.FaultEnd && op.Type == history.Invoke && op.FaultID == w.ID && heal < 0 {
			heal = op.Time
		}
	}
	var out []history.Op
	for _, op := range ops {
		if heal >= 0 && op.Process == victim && op.Type != history.Invoke && op.Time > heal {
			out = append(out, op)
		}
	}
	return out
}

// crash-client kills the holder: no release, and a fresh process goes on.
func TestCrashClientKillsTheHolderWhichNeverReleases(t *testing.T) {
	spec := nemesistest.Options{Topology: cluster.Independent, Masters: 1}
	ops, ws := faultRun(t, spec, "mutex", "simple", "crash-client", nemesis.Params{Key: "k"}, 5*time.Second, nil)
	require.Len(t, ws, 1)
	require.Less(t, time.Duration(ws[0].End-ws[0].Start), time.Second, "a crash has nothing to heal: its window closes at once")
	victim, _ := strconv.Atoi(strings.Fields(ws[0].Node)[1])
	var leases []string
	for _, op := range ops {
		if op.Process == victim && op.F == history.Acquire && op.Type == history.OK {
			leases = append(leases, op.Lease)
		}
	}
	require.NotEmpty(t, leases)
	held := leases[len(leases)-1]
	later := 0
	for _, op := range ops {
		require.False(t, op.F == history.Release && op.Type != history.Invoke && op.Lease == held && op.Type == history.OK,
			"a killed holder never released %s", held)
		if op.Process >= 3 { // beyond the three first client processes
			later++
		}
	}
	require.Positive(t, later, "a fresh process took the victim's place")
}

// pause-at stops a get-then-del client between its GET and its DEL.
func TestPauseAtStopsTheClientInsideTheLock(t *testing.T) {
	spec := nemesistest.Options{Topology: cluster.Independent, Masters: 1}
	_, ws := faultRun(t, spec, "mutex", "get-then-del", "pause-at", nemesis.Params{Key: "k", Point: "after-get"}, 10*time.Second,
		func(r *workloads.Runner, victim int) {
			require.Equal(t, "T", r.Process(victim).State())
		})
	require.Len(t, ws, 1)
	require.Equal(t, "pause-client", ws[0].Fault, "pause-at is the pause-client fault, struck at the point")
	require.Contains(t, ws[0].Node, "at after-get")
	require.True(t, ws[0].Healed)
	require.GreaterOrEqual(t, time.Duration(ws[0].End-ws[0].Start), time.Second, "twice the 500ms TTL")
}

func TestClientFaultParamsAreChecked(t *testing.T) {
	_, err := nemesis.New("pause-client", nemesis.Params{On: history.Release})
	require.ErrorContains(t, err, "can wait for an ok acquire or read")
	_, err = nemesis.New("pause-client", nemesis.Params{For: -time.Second})
	require.ErrorContains(t, err, "must not be negative")
	_, err = nemesis.New("pause-at", nemesis.Params{Key: "k"})
	require.ErrorContains(t, err, "needs the point")
	_, err = nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{{Fault: "pause-client", Target: "primary", Point: "after-get"}}})
	require.ErrorContains(t, err, "needs a client target")
}
