package scenarios

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

func faultOps(id, fault, node, target string, start, end int64) []history.Op {
	ops := []history.Op{
		{Type: history.Invoke, Time: start - 5, Process: history.NemesisProcess, F: history.FaultStart, Fault: fault, FaultID: id, Node: node, Target: target},
		{Type: history.OK, Time: start, Process: history.NemesisProcess, F: history.FaultStart, Fault: fault, FaultID: id, Node: node, Target: target},
	}
	if end > 0 {
		ops = append(ops, history.Op{Type: history.Invoke, Time: end, Process: history.NemesisProcess, F: history.FaultEnd, Fault: fault, FaultID: id, Node: node})
	}
	return ops
}

// The faults a run struck become plan steps on their concrete targets,
// each after the previous one's strike and for as long as it held; one
// never healed holds to the end; a history without targets is refused.
func TestPlanOfIsTheFaultsAsTheyStruck(t *testing.T) {
	ms := int64(time.Millisecond)
	ops := []history.Op{{Type: history.OK, Time: 100 * ms, Process: history.NemesisProcess, F: history.PhaseF, Phase: history.PhaseFaults}}
	ops = append(ops, faultOps("f1", "kill", "redis-3", "node:redis-3", 2100*ms, 3100*ms)...)
	ops = append(ops, faultOps("f2", "clock-jump", "redis-1 by -3s", "node:redis-1", 5000*ms, 7000*ms)...)
	ops = append(ops, faultOps("f3", "pause-client", "process 4", "client:2", 9000*ms, 0)...)
	// Process 5 read the resource under its lease of k1 just before its
	// pause struck, and wrote only after: the pause landed in between.
	ops = append(ops,
		history.Op{Type: history.Invoke, Time: 9500 * ms, Process: 5, F: history.Read, Key: "k1", Lease: "p5.7"},
		history.Op{Type: history.OK, Time: 9510 * ms, Process: 5, F: history.Read, Key: "k1", Lease: "p5.7"})
	ops = append(ops, faultOps("f4", "pause-client", "process 5", "client:3", 9600*ms, 11600*ms)...)
	ops = append(ops, history.Op{Type: history.Invoke, Time: 11700 * ms, Process: 5, F: history.Write, Key: "k1", Lease: "p5.7"})
	steps, err := PlanOf(ops)
	require.NoError(t, err)
	require.Equal(t, []nemesis.Step{
		{Fault: "kill", Target: "node:redis-3", After: 2 * time.Second, For: time.Second},
		{Fault: "clock-jump", Target: "node:redis-1", After: 2900 * time.Millisecond, For: 2 * time.Second, By: -3 * time.Second},
		{Fault: "pause-client", Target: "client:2", After: 4 * time.Second},
		{Fault: "pause-client", Target: "holder", Key: "k1", On: history.Read, After: 600 * time.Millisecond, For: 2 * time.Second},
	}, steps, "a pause that landed between a read and its write strikes the holder at its read")
	_, err = nemesis.New("plan", nemesis.Params{Steps: steps})
	require.NoError(t, err, "the steps are a valid plan")

	_, err = PlanOf(faultOps("f1", "kill", "redis-3", "", 1, 2))
	require.ErrorContains(t, err, "names no target")
	_, err = PlanOf(nil)
	require.ErrorContains(t, err, "nothing to shrink")
}

// AsPlan strikes the steps as a plan with a fault phase that fits them:
// their span and two seconds (9 s), and room for drift: a tenth of that
// and two TTLs.
func TestAsPlanFitsTheFaultPhaseToTheSteps(t *testing.T) {
	s, err := Get("random-redlock")
	require.NoError(t, err)
	steps := []nemesis.Step{{Fault: "clock-jump", Target: "node:redis-1", After: 5 * time.Second, For: 2 * time.Second, By: 3 * time.Second}}
	require.Equal(t, time.Minute, AsPlan(s, steps).Time.D(), "a longer phase is kept")
	s.Time = Duration(time.Second)
	got := AsPlan(s, steps)
	require.Equal(t, "plan", got.Nemesis)
	require.Equal(t, steps, got.Fault.Steps)
	require.Equal(t, 13900*time.Millisecond, got.Time.D())
	_, err = got.Prepare(RunOptions{Seed: 1})
	require.NoError(t, err)
}
