package nemesis

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
)

// A failover Sentinel announced (+switch-master away from the struck
// master) is the one the step waits for, even when no majority of
// Sentinels answers the question afterwards (a loaded machine, TILT);
// without the announcement or an answer, the step is missed.
func TestAFailoverSentinelAnnouncedIsTheOneTheStepWaitsFor(t *testing.T) {
	missed := func(switched <-chan history.Op) bool {
		rec := history.NewRecorder(io.Discard)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()                                                    // the fault phase is over: one last look
		env := Env{Rec: rec, Cluster: OnDocker(&cluster.Cluster{})} // no Sentinel answers
		(&Plan{}).awaitFailover(ctx, env, 0, Step{Fault: "isolate-primary", Until: UntilFailover}, dockerNode{&cluster.Node{Name: "redis-1"}}, time.Now(), switched)
		for _, op := range rec.Ops() {
			if op.F == history.FaultMissed {
				return true
			}
		}
		return false
	}
	announced := make(chan history.Op, 1)
	announced <- history.Op{F: history.Failover, Node: "redis-1 -> redis-3"}
	require.False(t, missed(announced))
	require.True(t, missed(make(chan history.Op)))
}
