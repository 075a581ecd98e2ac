package nemesis

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTopologyRequirementsNarrowToWhatEveryFaultAdmits(t *testing.T) {
	both, ok := narrow(OnFailover, OnSentinel)
	require.True(t, ok)
	require.Equal(t, "sentinel", both)
	both, ok = narrow("", OnCluster)
	require.True(t, ok)
	require.Equal(t, "cluster", both)
	_, ok = narrow(OnSentinel, OnCluster)
	require.False(t, ok, "no topology has both a Sentinel and a cluster election")

	need, err := NeedsOf("plan", Params{Steps: []Step{{Fault: "isolate-primary", Target: "primary"}}})
	require.NoError(t, err)
	require.True(t, need.Allows("cluster"))
	require.True(t, need.Allows("sentinel"))
	require.False(t, need.Allows("independent"))
	need, err = NeedsOf("plan", Params{Steps: []Step{{Fault: "isolate-primary", Target: "primary"}, {Fault: "sentinel-failover"}}})
	require.NoError(t, err)
	require.Equal(t, "the sentinel topology", need.TopologyWords())
}
