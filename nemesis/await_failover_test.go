package nemesis

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/topology"
)

// A failover Sentinel announced (+switch-master away from the struck
// master) is the one the step waits for, even when no majority of
// Sentinels answers the question afterwards (a loaded machine, TILT);
// without the announcement or an answer, the step is missed.
func TestAFailoverSentinelAnnouncedIsTheOneTheStepWaitsFor(t *testing.T) {
	missed := func(switched <-chan history.Op) bool {
		rec := history.NewRecorder(io.Discard)
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the fault phase is over: one last look
		env := Env{Rec: rec, Cluster: silentSentinels{}}
		(&Plan{}).awaitFailover(ctx, env, 0, Step{Fault: "isolate-primary", Until: UntilFailover}, namedNode{name: "redis-1"}, time.Now(), switched)
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

// silentSentinels is a Sentinel deployment whose Sentinels never say which
// node is master; it answers nothing else a failover wait asks.
type silentSentinels struct{ Cluster }

func (silentSentinels) Master(context.Context) (Node, error) {
	return nil, errors.New("no Sentinel answers")
}
func (silentSentinels) Topology() string              { return topology.Sentinel }
func (silentSentinels) FailoverWithin() time.Duration { return 0 }

// namedNode is a node known by its name alone.
type namedNode struct {
	Node
	name string
}

func (n namedNode) Name() string { return n.name }
