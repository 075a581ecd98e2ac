package nemesis

import (
	"context"

	"github.com/deadbolt-lab/deadbolt/history"
)

// checkHealth records one check that the cluster is healthy (every node
// answers, one master that replicas and Sentinels follow), waiting up to
// env.HealthTimeout, or by default as long as the final check after the
// run (Cluster.HealthTimeout). A check that fails stays in the history, where the
// checker reads it as a fault whose effect is in doubt. Only an interrupt
// (env.Halt) cuts it short, not the end of the workload: a heal at the end
// of the run is checked all the same.
func checkHealth(env Env, f history.F, fault, node, id string) {
	if env.Cluster == nil {
		return
	}
	ctx := env.Halt
	if ctx == nil {
		ctx = context.Background()
	}
	op := history.Op{Type: history.Invoke, Process: history.NemesisProcess, F: f, Fault: fault, FaultID: id, Node: node}
	env.Rec.Record(op)
	err := env.Cluster.WaitHealthy(ctx, or(env.HealthTimeout, env.Cluster.HealthTimeout()))
	op.Type = history.OK
	switch {
	case ctx.Err() != nil:
		op.Type, op.Error = history.Info, "interrupted: "+ctx.Err().Error()
	case err != nil:
		op.Type, op.Error = history.Fail, err.Error()
	}
	env.Rec.Record(op)
}

// CheckBefore records the check that the cluster is healthy before the
// schedule's first fault, made before the workload starts, so that it can
// neither race a workload event the schedule waits for nor move a fault.
// Each later fault's check before is the check after the heal that left
// no fault in effect. schedule names the check's fault.
func CheckBefore(env Env, schedule string) {
	checkHealth(env, history.HealthBefore, schedule, "", "")
}
