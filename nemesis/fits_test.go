package nemesis_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// NodeFaults names what a deployment deadbolt did not start cannot take,
// and nothing a client, a link or a Redis command does.
func TestNodeFaultsNameWhatNeedsContainers(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    nemesis.Params
		want []string
	}{
		{"none", nemesis.Params{}, nil},
		{"pause-client", nemesis.Params{Key: "k0"}, nil},
		{"pause-at", nemesis.Params{Key: "k0", Point: "after-get"}, nil},
		{"isolate-primary", nemesis.Params{}, []string{"isolate-primary on primary"}},
		{"kill-minority", nemesis.Params{}, []string{"kill on minority"}},
		{"plan", nemesis.Params{Steps: []nemesis.Step{
			{Fault: "link-cut", Target: "link:0:redis-4,redis-5"},
			{Fault: "restart", Target: "node:redis-3", After: time.Second},
			{Fault: "sentinel-failover"},
		}}, []string{"restart on node:redis-3"}},
		{"random", nemesis.Params{Faults: []string{"pause-client", "clock-jump", "link-delay"}}, []string{"clock-jump on minority"}},
	} {
		got, err := nemesis.NodeFaults(tc.name, tc.p)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}
	_, err := nemesis.NodeFaults("nosuch", nemesis.Params{})
	require.Error(t, err)
}

// FaultsOf names every fault a schedule strikes, once, in its order.
func TestFaultsOfNamesTheFaultsAScheduleStrikes(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    nemesis.Params
		want []string
	}{
		{"none", nemesis.Params{}, nil},
		{"kill-minority", nemesis.Params{}, []string{"kill"}},
		{"pause-at", nemesis.Params{Key: "k0", Point: "after-get"}, []string{"pause-client"}},
		{"plan", nemesis.Params{Steps: []nemesis.Step{
			{Fault: "link-cut", Target: "link:0:redis-4,redis-5"},
			{Fault: "restart", Target: "node:redis-3"},
			{Fault: "link-cut", Target: "link:1:redis-1"},
		}}, []string{"link-cut", "restart"}},
		{"random", nemesis.Params{Faults: []string{"clock-jump", "kill"}}, []string{"clock-jump", "kill"}},
	} {
		got, err := nemesis.FaultsOf(tc.name, tc.p)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}
}
