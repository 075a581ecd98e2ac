package nemesis_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/nemesis/nemesistest"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// okAt is the time of the ok of the first op of f whose invocation
// matches, or -1.
func okAt(ops []history.Op, match func(history.Op) bool) int64 {
	for _, op := range ops {
		if op.Type == history.OK && match(op) {
			return op.Time
		}
	}
	return -1
}

// A plan's opening step strikes before any client asks for a lock, and a
// step aimed at client slot 2's grant gets that grant whatever the
// scheduling: the key stays closed to the others until the fault struck,
// and the client is held at its grant while it strikes.
func TestAStepAimedAtOneClientsGrantGetsIt(t *testing.T) {
	spec := nemesistest.Options{Topology: cluster.Independent, Masters: 1}
	p := nemesis.Params{Steps: []nemesis.Step{
		{Fault: "pause-node", Target: "node:redis-1", For: 300 * time.Millisecond},
		{Fault: "pause-client", Target: "client:2", WaitKey: "k", WaitSlot: 2, For: 200 * time.Millisecond},
	}}
	ops, ws := faultRun(t, spec, "mutex", "simple", "plan", p, 10*time.Second, nil)
	require.Len(t, ws, 2)
	opened := okAt(ops, func(op history.Op) bool { return op.F == history.FaultStart && op.Fault == "pause-node" })
	var aimed history.Op
	for _, op := range ops {
		if op.F == history.FaultStart && op.Fault == "pause-client" && op.Type == history.OK {
			aimed = op
		}
	}
	require.NotEmpty(t, aimed.Lease, "the fault names the grant it was aimed at")
	owner, err := strconv.Atoi(strings.TrimPrefix(strings.Split(aimed.Lease, ".")[0], "p"))
	require.NoError(t, err)
	require.Equal(t, "process "+strconv.Itoa(owner), aimed.Node, "the fault struck the client it waited for")
	for _, op := range ops {
		if op.F != history.Acquire || op.Type != history.Invoke {
			continue
		}
		require.Greater(t, op.Time, opened, "no client asks before the opening fault struck: %+v", op)
		if op.Time < aimed.Time {
			require.Equal(t, owner, op.Process, "only slot 2 may ask for k until its fault struck: %+v", op)
		}
	}
	r := checker.Check(ops, checker.Options{})
	require.NotContains(t, kinds(r.Anomalies), checker.KindPrecondition, r.Reason)
	require.NotContains(t, kinds(r.Anomalies), checker.KindFaultFailed, r.Reason)
}

// A step whose moment never comes is recorded as missed, naming the step,
// and the run is unknown though the first step struck.
func TestAStepWhoseMomentNeverComesIsMissed(t *testing.T) {
	spec := nemesistest.Options{Topology: cluster.Independent, Masters: 1}
	p := nemesis.Params{Steps: []nemesis.Step{
		{Fault: "pause-node", Target: "node:redis-1", For: 100 * time.Millisecond},
		{Fault: "pause-node", Target: "node:redis-1", WaitKey: "never", WaitSlot: 0, For: 100 * time.Millisecond},
	}}
	ops, ws := faultRun(t, spec, "mutex", "simple", "plan", p, 3*time.Second, nil)
	require.Len(t, ws, 1, "only the first step struck")
	missed := missedSteps(ops)
	require.Len(t, missed, 1)
	require.Equal(t, "step 2: pause-node on node:redis-1 at client 0's grant of never", missed[0].Node)
	require.Contains(t, missed[0].Error, "never came before the fault phase ended")
	r := checker.Check(ops, checker.Options{})
	require.Equal(t, checker.Unknown, r.Verdict, r.Reason)
	require.Contains(t, r.Reason, "step 2: pause-node on node:redis-1 at client 0's grant of never never struck")
}

// missedSteps are the completions of the steps a run recorded missed.
func missedSteps(ops []history.Op) []history.Op {
	var missed []history.Op
	for _, op := range ops {
		if op.F == history.FaultMissed && op.Type == history.Fail {
			missed = append(missed, op)
		}
	}
	return missed
}

func kinds(as []checker.Anomaly) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Kind)
	}
	return out
}

// A step aimed at a grant under its fault strikes before any client asks,
// then keeps the key for its client until that client's grant, which comes
// while the fault is in effect; then every client may ask.
func TestAStepAimedAtAGrantUnderItsFaultGetsIt(t *testing.T) {
	spec := nemesistest.Options{Topology: cluster.Independent, Masters: 1, LinkFaults: true}
	p := nemesis.Params{Steps: []nemesis.Step{
		{Fault: "link-delay", Target: "link:1:redis-1", By: 100 * time.Millisecond, WaitKey: "k", WaitSlot: 1, Aim: nemesis.AimGrant},
	}}
	ops, ws := faultRun(t, spec, "mutex", "simple", "plan", p, 3*time.Second, nil)
	require.Len(t, ws, 1)
	require.Empty(t, missedSteps(ops))
	struck := okAt(ops, func(op history.Op) bool { return op.F == history.FaultStart })
	var first history.Op
	for _, op := range ops {
		if op.F == history.Acquire && op.Type == history.OK {
			first = op
			break
		}
	}
	require.NotZero(t, first.Time, "a grant came")
	require.Greater(t, first.Time, struck, "the grant came under the fault")
	slot1 := first.Process
	others := 0
	for _, op := range ops {
		if op.F != history.Acquire || op.Type != history.Invoke {
			continue
		}
		require.Greater(t, op.Time, struck, "no client asks before the fault struck: %+v", op)
		if op.Time < first.Time {
			require.Equal(t, slot1, op.Process, "only the aimed client asks until its grant: %+v", op)
		} else if op.Process != slot1 {
			others++
		}
	}
	require.Positive(t, others, "the other clients ask once the aimed grant came")
	r := checker.Check(ops, checker.Options{})
	require.NotContains(t, kinds(r.Anomalies), checker.KindPrecondition, r.Reason)
}

// A step that takes its client's acquire in any outcome (Asked) is
// staged by an acquire that failed under the fault: a lock that must
// refuse is tested when its client asked for a free key.
func TestAStepAimedAtAnAcquireUnderItsFaultTakesARefusal(t *testing.T) {
	spec := nemesistest.Options{Topology: cluster.Independent, Masters: 1, LinkFaults: true}
	p := nemesis.Params{Steps: []nemesis.Step{
		{Fault: "link-cut", Target: "link:1:redis-1", WaitKey: "k", WaitSlot: 1, Aim: nemesis.AimAsked},
	}}
	ops, ws := faultRun(t, spec, "mutex", "simple", "plan", p, 4*time.Second, nil)
	require.Len(t, ws, 1)
	require.Empty(t, missedSteps(ops), "the failed acquire staged the step")
	var first history.Op
	for _, op := range ops {
		if op.F == history.Acquire && op.Type != history.Invoke {
			first = op
			break
		}
	}
	require.NotEqual(t, history.OK, first.Type, "the first acquire to end was the cut-off client's, and it failed: %+v", first)
}

// A grant aimed at under a fault that heals first never comes under it:
// the step is missed and the run unknown.
func TestAGrantUnderAFaultThatHealedFirstIsMissed(t *testing.T) {
	spec := nemesistest.Options{Topology: cluster.Independent, Masters: 1}
	p := nemesis.Params{Steps: []nemesis.Step{
		{Fault: "pause-node", Target: "node:redis-1", For: 100 * time.Millisecond, WaitKey: "never", WaitSlot: 0, Aim: nemesis.AimGrant},
	}}
	ops, ws := faultRun(t, spec, "mutex", "simple", "plan", p, 3*time.Second, nil)
	missed := missedSteps(ops)
	require.Len(t, missed, 1)
	require.Equal(t, "step 1: pause-node on node:redis-1, then client 0's grant of never under it", missed[0].Node)
	require.Contains(t, missed[0].Error, "never came while the fault was in effect")
	require.Len(t, ws, 1)
	require.Equal(t, ws[0].ID, missed[0].FaultID, "the missed grant names the window it waited under")
	require.Equal(t, "never", missed[0].Key)
	r := checker.Check(ops, checker.Options{})
	require.Equal(t, checker.Unknown, r.Verdict, r.Reason)
}

// A plan of opening steps only (a fault for the whole run) lets the
// clients begin as soon as they struck, not when they heal.
func TestAPlanOfOpeningStepsOnlyLetsTheWorkloadBegin(t *testing.T) {
	spec := nemesistest.Options{Topology: cluster.Independent, Masters: 1, LinkFaults: true}
	p := nemesis.Params{Steps: []nemesis.Step{{Fault: "link-delay", Target: "link:0:redis-1", By: time.Millisecond}}}
	ops, ws := faultRun(t, spec, "mutex", "simple", "plan", p, 3*time.Second, nil)
	require.Len(t, ws, 1)
	require.Equal(t, int64(time.Millisecond), ws[0].By, "the fault-start records the delay's size")
	require.True(t, ws[0].Effects.DelaysReplies)
	struck := okAt(ops, func(op history.Op) bool { return op.F == history.FaultStart })
	during := 0
	for _, op := range ops {
		if op.F == history.Acquire && op.Type == history.OK {
			require.Greater(t, op.Time, struck, "no grant before the opening fault struck")
			if op.Time < ws[0].End {
				during++
			}
		}
	}
	require.Positive(t, during, "the clients worked while the fault was in effect")
}

// A pause with a handoff ends at the next grant of its key, and holds that
// client at its grant until the woken client's request in flight (its
// release, stopped between GET and DEL) has completed: the late DEL lands
// while the next holder holds the key, whatever the scheduling.
func TestAHandoffPauseEndsUnderTheNextHoldersGrant(t *testing.T) {
	spec := nemesistest.Options{Topology: cluster.Independent, Masters: 1}
	p := nemesis.Params{Key: "k", Point: "after-get", Until: nemesis.UntilHandoff}
	// Holds of no length: only the handoff keeps the next holder from
	// releasing before the late DEL lands.
	ops, ws := faultRunShaped(t, spec, "mutex", "get-then-del", "pause-at", p, 6*time.Second, nil,
		func(c *workloads.Config) { c.HoldMin, c.HoldMax = 0, 0 })
	require.Len(t, ws, 1)
	var end history.Op
	for _, op := range ops {
		if op.F == history.FaultEnd && op.Type == history.OK {
			end = op
		}
	}
	require.NotEmpty(t, end.Lease, "the heal names the grant it ended under")
	sleeper, err := strconv.Atoi(strings.Fields(ws[0].Node)[1])
	require.NoError(t, err, ws[0].Node)
	var granted, woke, released int64 = -1, -1, -1
	for _, op := range ops {
		switch {
		case op.F == history.Acquire && op.Type == history.OK && op.Lease == end.Lease:
			granted = op.Time
		case op.F == history.Release && op.Type != history.Invoke && op.Process == sleeper && woke < 0 && op.Time > ws[0].Start:
			// The release the sleeper was stopped in (its completion may
			// be recorded before the heal's).
			woke = op.Time
		case op.F == history.Release && op.Type == history.Invoke && op.Lease == end.Lease:
			released = op.Time
		}
	}
	require.Positive(t, granted, "the next holder's grant")
	require.Positive(t, woke, "the release the sleeper was stopped in completed")
	require.Less(t, granted, end.Time, "the pause ended after the next grant")
	require.Less(t, woke, released, "the next holder was held until the sleeper's late release had completed")
	r := checker.Check(ops, checker.Options{})
	require.NotContains(t, kinds(r.Anomalies), checker.KindPrecondition, r.Reason)
	require.NotContains(t, kinds(r.Anomalies), checker.KindFaultFailed, r.Reason)
	require.Equal(t, checker.Invalid, r.Verdict, "the late DEL removed the next holder's lock: %s", r.Reason)
}

// A fault held until Sentinel fails the master over is missed, naming the
// step, when no failover comes before the fault phase ends: isolating a
// replica never makes Sentinel promote one, so the run is unknown. On the
// primary the failover comes, and the isolation heals after it.
func TestAFailoverThatNeverComesIsMissed(t *testing.T) {
	spec := nemesistest.Options{Topology: cluster.Sentinel, Replicas: 2, DownAfter: 300 * time.Millisecond}
	p := nemesis.Params{Steps: []nemesis.Step{{Fault: "isolate-replica", Target: "replica", For: time.Second, Until: nemesis.UntilFailover}}}
	ops, ws := faultRun(t, spec, "mutex", "simple", "plan", p, 4*time.Second, nil)
	require.Len(t, ws, 1)
	missed := missedSteps(ops)
	require.Len(t, missed, 1)
	require.Equal(t, "step 1: isolate-replica on replica, held until Sentinel fails the master over", missed[0].Node)
	require.Contains(t, missed[0].Error, "Sentinel promoted no replica")
	r := checker.Check(ops, checker.Options{MinAcquires: 1})
	require.Equal(t, checker.Unknown, r.Verdict, r.Reason)

	p = nemesis.Params{Steps: []nemesis.Step{{Fault: "isolate-primary", Target: "primary", For: 100 * time.Millisecond, Until: nemesis.UntilFailover}}}
	ops, ws = faultRun(t, spec, "mutex", "simple", "plan", p, 20*time.Second, nil)
	require.Len(t, ws, 1)
	for _, op := range ops {
		require.NotEqual(t, history.FaultMissed, op.F, "the failover came: %+v", op)
	}
	require.GreaterOrEqual(t, ws[0].End-ws[0].Start, int64(spec.DownAfter), "the isolation outlasted its 100ms until Sentinel promoted a replica")
}

// A grant aimed at under a fault held until the failover must be the old
// master's: the cut-off master grants it (staged), while a grant only the
// promoted replica could make (the old master is dead) stages nothing and
// the step is missed.
func TestAGrantUnderAFailoverMustBeTheOldMasters(t *testing.T) {
	spec := nemesistest.Options{Topology: cluster.Sentinel, Replicas: 2, DownAfter: 300 * time.Millisecond}
	p := nemesis.Params{Steps: []nemesis.Step{{Fault: "isolate-primary", Target: "primary", For: 100 * time.Millisecond, Until: nemesis.UntilFailover, WaitKey: "k", WaitSlot: nemesis.AnySlot, Aim: nemesis.AimGrant}}}
	ops, ws := faultRun(t, spec, "mutex", "simple", "plan", p, 20*time.Second, nil)
	require.Len(t, ws, 1)
	require.Empty(t, missedSteps(ops), "the cut-off master granted k")
	struck := okAt(ops, func(op history.Op) bool { return op.F == history.FaultStart })
	first := okAt(ops, func(op history.Op) bool { return op.F == history.Acquire })
	require.Greater(t, first, struck, "the first grant came under the isolation")

	p = nemesis.Params{Steps: []nemesis.Step{{Fault: "kill", Target: "primary", For: 3 * time.Second, Until: nemesis.UntilFailover, WaitKey: "k", WaitSlot: nemesis.AnySlot, Aim: nemesis.AimGrant}}}
	ops, _ = faultRun(t, spec, "mutex", "simple", "plan", p, 20*time.Second, nil)
	missed := missedSteps(ops)
	require.Len(t, missed, 1)
	require.Contains(t, missed[0].Error, "was not made by the master the failover replaces")
	r := checker.Check(ops, checker.Options{})
	require.Equal(t, checker.Unknown, r.Verdict, r.Reason)
}
