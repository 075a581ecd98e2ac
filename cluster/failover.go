package cluster

import "time"

// sentinelFailoverTimeout is Sentinel's failover-timeout for a down-after:
// a try that has not promoted a replica by then is aborted, and the next
// try begins twice this after the last one began.
func sentinelFailoverTimeout(downAfter time.Duration) time.Duration {
	return 3*downAfter + 2*time.Second
}

// FailoverWithin is how long after a master falls silent the topology's own
// failover machinery has had two tries to replace it: a Sentinel vote split
// three ways (or a Redis Cluster election no replica won) is retried, and
// only two failed tries in a row leave a run without its failover. Zero on a
// topology with nothing to fail over.
func (s Spec) FailoverWithin() time.Duration {
	s = s.Defaults()
	switch s.Topology {
	case Sentinel:
		ft := sentinelFailoverTimeout(s.DownAfter)
		return s.DownAfter + 3*ft
	case RedisCluster:
		// A replica learns FAIL within about two node timeouts, waits up to
		// 1.5 s plus its rank, and retries an election after twice its
		// auth timeout (twice the node timeout, at least 2 s).
		auth := max(2*s.DownAfter, 2*time.Second)
		return 2*s.DownAfter + 3*auth + 2*time.Second
	}
	return 0
}
