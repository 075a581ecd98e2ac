package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A failover step waits for two of the topology's own tries: Sentinel's
// retry begins twice its failover-timeout after the first, so the wait must
// outlast that, or a split vote alone would leave the run without its
// failover.
func TestFailoverWithinOutlastsTheSecondTry(t *testing.T) {
	s := Spec{Topology: Sentinel, DownAfter: 3 * time.Second}
	ft := sentinelFailoverTimeout(s.DownAfter)
	require.Equal(t, 11*time.Second, ft, "the failover-timeout Sentinel is configured with")
	require.Greater(t, s.FailoverWithin(), s.DownAfter+2*ft, "the second try begins 2×failover-timeout after the first")
	require.Positive(t, Spec{Topology: RedisCluster}.FailoverWithin())
	require.Zero(t, Spec{Topology: Independent}.FailoverWithin(), "independent masters have no failover")
}
