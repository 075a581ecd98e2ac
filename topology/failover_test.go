package topology

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
	downAfter := 3 * time.Second
	ft := SentinelFailoverTimeout(downAfter)
	require.Equal(t, 11*time.Second, ft, "the failover-timeout Sentinel is configured with")
	require.Greater(t, FailoverWithin(Sentinel, downAfter), downAfter+2*ft, "the second try begins 2×failover-timeout after the first")
	require.Positive(t, FailoverWithin(Cluster, 2*time.Second))
	require.Zero(t, FailoverWithin(Independent, downAfter), "independent masters have no failover")
}
