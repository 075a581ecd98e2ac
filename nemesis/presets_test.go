package nemesis_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/nemesis/nemesistest"
)

func TestKillMinorityOutwaitsTheTTLAndHeals(t *testing.T) {
	c := nemesistest.StartWith(t, nemesistest.Options{Topology: cluster.Independent, Masters: 5})
	rec := history.NewRecorder(nil)
	margin := 200 * time.Millisecond
	n, err := nemesis.New("kill-minority", nemesis.Params{After: time.Millisecond, For: margin})
	require.NoError(t, err)
	ttl := 500 * time.Millisecond
	require.Equal(t, time.Millisecond+ttl+margin, n.Span(ttl))
	require.NoError(t, n.Run(context.Background(), nemesis.Env{Cluster: c, Rec: rec, Rng: rand.New(rand.NewPCG(1, 2)), TTL: ttl}))

	ws := checker.FaultWindows(rec.Ops())
	require.Len(t, ws, 1)
	w := ws[0]
	require.Equal(t, "kill", w.Fault, "the preset is the kill fault on a minority")
	require.Len(t, strings.Split(w.Node, ","), 2, "a minority of 5 is 2")
	require.True(t, w.Healed)
	require.GreaterOrEqual(t, time.Duration(w.End-w.Start), ttl+margin, "restart only after the TTL")
	require.NoError(t, c.WaitHealthy(context.Background(), 30*time.Second))
}

func TestUnknownNemesis(t *testing.T) {
	_, err := nemesis.New("meteor", nemesis.Params{})
	require.ErrorContains(t, err, `unknown nemesis "meteor"`)
	require.True(t, nemesis.Runs("isolate-primary", "sentinel"))
	require.True(t, nemesis.Runs("isolate-primary", "cluster"), "a cluster's slot master is a primary too")
	require.False(t, nemesis.Runs("isolate-primary", "independent"))
	require.True(t, nemesis.Runs("none", "independent"), "no fault needs no topology")
}

// A preset aimed at a key's holder takes a client slot beside the key as
// that slot's hold of it (a rolling upgrade's old client), and any
// client's without one.
func TestClientPresetsAimAtASlotsHoldOfTheKey(t *testing.T) {
	for _, tc := range []struct {
		p    nemesis.Params
		want string
	}{
		{nemesis.Params{Key: "k0"}, "holder"},
		{nemesis.Params{Key: "k0", Client: 2}, "holder:2"},
		{nemesis.Params{Client: 2}, "client:2"},
	} {
		n, err := nemesis.New("pause-client", tc.p)
		require.NoError(t, err)
		plan, ok := n.(*nemesis.Plan)
		require.True(t, ok)
		require.Equal(t, tc.want, plan.Steps[0].Target, "%+v", tc.p)
	}
}
