package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster"
)

// Waiters in line: five clients on one key, each willing to wait 1.5 s,
// hold it 50-200 ms and come straight back, so that most of them stand in
// the fair lock's queue most of the time. The fairness checker holds the
// grants to the order the waiters stood in line. The wait stays under half
// the TTL so that a waiter's grant arrives with its lease still open and
// the watchdog's first renewal (TTL/3 after) comes before the window the
// harness gives it closes.
func init() {
	queueing := func(s Scenario) Scenario {
		s.LockOptions = client.LockOptions{WaitMS: 1500}
		s.Clients, s.Keys = 5, []string{"k0"}
		s.TTL, s.HoldMin, s.HoldMax, s.Pause = 3*time.Second, 50*time.Millisecond, 200*time.Millisecond, 0
		return s
	}
	quiet := func(s Scenario) Scenario {
		s.Cluster, s.Nemesis = cluster.Spec{Topology: cluster.Independent, Masters: 1}, "none"
		s.Time, s.CI = 8*time.Second, true
		return queueing(s)
	}
	register(quiet(Scenario{
		Name: "fair-queue",
		Description: "Redisson-style fair lock, five clients waiting in its queue for one key, no fault: every " +
			"waiter in line before another acquire was sent is granted before it",
		Expect: Safe, Lock: "fair",
	}))
	register(quiet(Scenario{
		Name: "fair-queue-barging",
		Description: "the same with a fair lock that hands a free lock to whoever asks first, in line or not " +
			"(a broken variant): mutual exclusion holds, the queue's order does not",
		Expect: Unsafe, Lock: "fair-barging",
	}))
	// Measured on 10 seeds: no double hold and no queue jump, because the
	// promoted replica's copy of the queue, taken when the master was cut
	// off, names waiters that have long given up on the old master; every
	// acquire there waits behind them until their places lapse (patience,
	// 3 x (TTL + call timeout) after they last looked), longer than any
	// lease granted on the old master lasts. Safe by standing still.
	register(queueing(Scenario{
		Name: "fair-failover",
		Description: "the fair-queue workload on a Sentinel-managed master that is cut off from its replicas " +
			"and Sentinels while clients still reach it: no double hold, because the promoted replica's stale " +
			"queue of waiters that gave up blocks every grant until their places lapse (about 7.5 s without a grant)",
		Expect: Safe, Lock: "fair",
		Cluster: cluster.Spec{Topology: cluster.Sentinel}, Nemesis: "isolate-primary",
		Time: 20 * time.Second, CI: true,
	}))
}
