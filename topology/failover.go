package topology

import "time"

// SentinelFailoverTimeout is Sentinel's failover-timeout for a down-after:
// a try that has not promoted a replica by then is aborted, and the next
// try begins twice this after the last one began.
func SentinelFailoverTimeout(downAfter time.Duration) time.Duration {
	return 3*downAfter + 2*time.Second
}

// FailoverWithin is how long after a master falls silent a topology's own
// failover machinery has had two tries to replace it: a Sentinel vote split
// three ways (or a Redis Cluster election no replica won) is retried, and
// only two failed tries in a row leave a run without its failover.
// downAfter is Sentinel's down-after or the cluster's node timeout. Zero on
// a topology with nothing to fail over.
func FailoverWithin(topology string, downAfter time.Duration) time.Duration {
	switch topology {
	case Sentinel:
		return downAfter + 3*SentinelFailoverTimeout(downAfter)
	case Cluster:
		// A replica learns FAIL within about two node timeouts, waits up to
		// 1.5 s plus its rank, and retries an election after twice its
		// auth timeout (twice the node timeout, at least 2 s).
		auth := max(2*downAfter, 2*time.Second)
		return 2*downAfter + 3*auth + 2*time.Second
	}
	return 0
}
