package nemesis_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/nemesis/nemesistest"
)

// Two pauses of one kind that overlap keep their own windows, each healed
// on its own clock, and the plan returns with both nodes answering.
func TestPlanOverlapsFaultsOfOneKindAndHealsEach(t *testing.T) {
	c := nemesistest.StartWith(t, nemesistest.Options{Topology: cluster.Independent, Masters: 2})
	rec := history.NewRecorder(nil)
	n, err := nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{
		{Fault: "pause-node", Target: "node:redis-1", For: 1500 * time.Millisecond},
		{Fault: "pause-node", Target: "node:redis-2", After: 500 * time.Millisecond, For: 300 * time.Millisecond},
	}})
	require.NoError(t, err)
	require.Equal(t, 1500*time.Millisecond, n.Span(time.Second))
	env := nemesis.Env{Cluster: c, Rec: rec, Rng: rand.New(rand.NewPCG(1, 2)), TTL: time.Second}
	require.NoError(t, n.Run(context.Background(), env))

	ws := checker.FaultWindows(rec.Ops())
	require.Len(t, ws, 2)
	one, two := ws[0], ws[1]
	require.Equal(t, "redis-1", one.Node)
	require.Equal(t, "redis-2", two.Node)
	require.NotEqual(t, one.ID, two.ID)
	require.True(t, one.Healed && two.Healed)
	require.Less(t, two.End, one.End, "the second pause healed inside the first")
	require.Greater(t, two.Start, one.Start)
	// The plan's own check after the last heal saw every node answer; a
	// single PING afterwards could stall on a loaded machine (one did, 2 s).
	healthy := 0
	for _, op := range rec.Ops() {
		if op.F == history.HealthAfter && op.Type == history.OK {
			healthy++
		}
	}
	require.Equal(t, 1, healthy, "one check, after the heal that left no fault in effect")
	_, err = history.Pair(rec.Ops())
	require.NoError(t, err)
}

// A fault that cannot strike is recorded as failed, and the run cannot pass.
func TestPlanRecordsAFaultThatFailed(t *testing.T) {
	c := nemesistest.StartWith(t, nemesistest.Options{Topology: cluster.Independent, Masters: 1})
	rec := history.NewRecorder(nil)
	n, err := nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{
		{Fault: "clock-jump", Target: "node:redis-1", By: time.Minute}, // the cluster has no clock faults
	}})
	require.NoError(t, err)
	env := nemesis.Env{Cluster: c, Rec: rec, Rng: rand.New(rand.NewPCG(1, 2)), TTL: time.Second}
	require.ErrorContains(t, n.Run(context.Background(), env), "without clock faults")
	r := checker.Check(rec.Ops(), checker.Options{})
	require.NotEqual(t, checker.Valid, r.Verdict)
	require.Contains(t, r.Reason, "clock-jump(redis-1 by 1m0s)")
}

func TestPlanStepsAreCheckedBeforeAnyContainer(t *testing.T) {
	for _, tc := range []struct {
		step nemesis.Step
		want string
	}{
		{nemesis.Step{Fault: "meteor"}, `unknown fault "meteor"`},
		{nemesis.Step{Fault: "kill", Target: "rack:2"}, `bad target "rack:2"`},
		{nemesis.Step{Fault: "link-cut", Target: "link:x:redis-1"}, `bad target "link:x:redis-1"`},
		{nemesis.Step{Fault: "pause-client", Target: "holder:x", Key: "k"}, `bad target "holder:x"`},
		{nemesis.Step{Fault: "pause-client", Target: "holder:-1", Key: "k"}, `bad target "holder:-1"`},
		{nemesis.Step{Fault: "kill", For: -time.Second}, "negative"},
		{nemesis.Step{Fault: "link-delay", Target: "link:0:redis-1", Aim: nemesis.AimGrant}, "a grant under the fault needs a wait key"},
		{nemesis.Step{Fault: "pause-client", Target: "client:0", WaitKey: "k", Aim: nemesis.AimGrant}, "a node or link target"},
		{nemesis.Step{Fault: "kill", WaitKey: "k", Aim: "soon"}, `unknown aim "soon"`},
		{nemesis.Step{Fault: "kill", For: time.Second, Until: "dawn"}, `unknown until "dawn"`},
	} {
		_, err := nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{tc.step}})
		require.ErrorContains(t, err, tc.want)
	}
	_, err := nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{{Fault: "pause-client", Target: "holder:3", Key: "k"}}})
	require.NoError(t, err, "a slot's hold of the key")
	_, err = nemesis.New("plan", nemesis.Params{})
	require.ErrorContains(t, err, "at least one step")
}

// The cluster's health is checked before the faults and after each heal
// that leaves none in effect, and recorded; a check that fails leaves the
// run unknown, naming it.
func TestPlanChecksHealthAroundEachFault(t *testing.T) {
	c := nemesistest.StartWith(t, nemesistest.Options{Topology: cluster.Independent, Masters: 2})
	plan := func() nemesis.Nemesis {
		n, err := nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{
			{Fault: "pause-node", Target: "node:redis-1", For: 200 * time.Millisecond},
		}})
		require.NoError(t, err)
		return n
	}
	run := func() []history.Op {
		rec := history.NewRecorder(nil)
		env := nemesis.Env{Cluster: c, Rec: rec, Rng: rand.New(rand.NewPCG(1, 2)), TTL: time.Second, HealthTimeout: 500 * time.Millisecond}
		nemesis.CheckBefore(env, "plan")
		require.NoError(t, plan().Run(context.Background(), env))
		return rec.Ops()
	}
	var fs []string
	for _, op := range run() {
		switch {
		case op.F == history.PhaseF && op.Type == history.Invoke:
			fs = append(fs, "phase "+string(op.Phase))
		case op.Type != history.Invoke && op.F != history.PhaseF:
			fs = append(fs, string(op.F)+" "+string(op.Type))
		}
	}
	require.Equal(t, []string{"health-before ok", "fault-start ok", "phase heal", "fault-end ok", "phase convergence", "health-after ok"}, fs,
		"the last fault's heal and the convergence after it are marked")

	// redis-2 down outside the nemesis: neither check can pass.
	down, err := c.Node("redis-2")
	require.NoError(t, err)
	require.NoError(t, down.Kill(context.Background()))
	ops := run()
	var failed []history.F
	for _, op := range ops {
		if op.Type == history.Fail {
			require.Contains(t, op.Error, "not healthy after 500ms")
			failed = append(failed, op.F)
		}
	}
	require.Equal(t, []history.F{history.HealthBefore, history.HealthAfter}, failed)
	r := checker.Check(ops, checker.Options{})
	require.Equal(t, checker.Unknown, r.Verdict)
	require.Contains(t, r.Reason, "the health check before the faults of plan ended fail")
	troubles := 0
	for _, a := range r.Anomalies {
		if a.Kind == checker.KindFaultFailed {
			troubles++
		}
	}
	require.Equal(t, 2, troubles, "both checks are anomalies")
	require.NoError(t, down.Start(context.Background()))
}

// A fault that struck lasts its planned time even when the fault phase
// ends a moment after the strike: the phase bounds when steps strike, not
// how long a struck one lasts, so a late moment does not leave a pause too
// short for a lease to run out.
func TestAFaultOutlastsTheFaultPhaseThatEndsAfterItStruck(t *testing.T) {
	c := nemesistest.StartWith(t, nemesistest.Options{Topology: cluster.Independent, Masters: 1})
	const hold = 500 * time.Millisecond
	n, err := nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{
		{Fault: "pause-node", Target: "node:redis-1", For: hold},
	}})
	require.NoError(t, err)
	rec := history.NewRecorder(nil)
	env := nemesis.Env{Cluster: c, Rec: rec, Rng: rand.New(rand.NewPCG(1, 2)), TTL: time.Second, HealthTimeout: 5 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	struck, unwatch := rec.Watch(func(op history.Op) bool { return op.F == history.FaultStart && op.Type == history.OK })
	defer unwatch()
	phaseEnded := make(chan int64, 1)
	go func() {
		<-struck
		phaseEnded <- rec.Now()
		cancel() // the fault phase ends a moment after the strike
	}()
	require.NoError(t, n.Run(ctx, env))
	ended := <-phaseEnded
	var start, end int64
	for _, op := range rec.Ops() {
		require.NotEqual(t, history.FaultMissed, op.F, "a struck fault is not missed: %+v", op)
		switch {
		case op.F == history.FaultStart && op.Type == history.OK:
			start = op.Time
		case op.F == history.FaultEnd && op.Type == history.OK:
			end = op.Time
		}
	}
	require.NotZero(t, end, "the fault healed")
	require.GreaterOrEqual(t, time.Duration(end-start), hold, "the pause lasted its planned time")
	require.Greater(t, end, ended, "the heal came after the fault phase ended")
}

func TestRenameNodesRenamesOnlyTheNodesASelectorNames(t *testing.T) {
	up := func(n string) (string, bool) { return "x-" + n, n != "bad" }
	for sel, want := range map[string]string{
		"node:a,b":        "node:x-a,x-b",
		"link:0:a":        "link:0:x-a",
		"link:*:a,b":      "link:*:x-a,x-b",
		"link:*:minority": "link:*:minority",
		"primary":         "primary",
		"client:*":        "client:*",
		"holder:1":        "holder:1",
		"majority":        "majority",
	} {
		got, err := nemesis.RenameNodes(sel, up)
		require.NoError(t, err, sel)
		require.Equal(t, want, got, sel)
	}
	_, err := nemesis.RenameNodes("link:0:a,bad", up)
	require.ErrorContains(t, err, "names node bad")
}
