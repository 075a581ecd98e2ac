package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/topology"
)

// A spec without a down-after waits for the failover of the default one,
// not of none.
func TestFailoverWithinUsesTheDefaultDownAfter(t *testing.T) {
	require.Equal(t, topology.FailoverWithin(Sentinel, time.Second), Spec{Topology: Sentinel}.FailoverWithin())
	require.Equal(t, topology.FailoverWithin(RedisCluster, 2*time.Second), Spec{Topology: RedisCluster}.FailoverWithin())
	require.Zero(t, Spec{Topology: Independent}.FailoverWithin(), "independent masters have no failover")
}
