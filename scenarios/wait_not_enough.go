package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// WAIT is not consensus. A client's SET NX is acknowledged by a replica
// (WAIT 1); then the master is killed and both replicas restart without
// persistence, so whichever Sentinel promotes has forgotten the key, and
// another client takes it while the first still holds it. The schedule
// holds the first client to get k0 at its grant until redis-1 is down, and
// holds the kill until Sentinel has promoted a replica. Sentinel tries
// every 10 s (twice its failover timeout): replicas still restarting abort
// its first try, and under load its Sentinels may split their votes on the
// next (seed 4 of the stress sweep: promoted 23.5 s after the kill), so a
// promotion may come 10-32 s after the kill. Holds last 36-37 s of a 40 s
// lease, so client A still holds k0 when another client takes it from the
// promoted replica; a run has few acquires by design, and needs only three.
// The workload settles for one TTL after convergence (not two): every
// lease granted before it has run out by then.
func init() {
	register(Scenario{
		Name: "wait-not-enough",
		Description: "simple-wait (WAIT 1) on Sentinel: a replica acknowledges A's lock, then the master is killed " +
			"and the replicas restart without persistence; the promoted one has forgotten the key and B takes it",
		Expect: Unsafe, Lock: "simple-wait", Workload: "mutex",
		Cluster: cluster.Spec{Topology: cluster.Sentinel},
		Nemesis: "plan", Fault: nemesis.Params{Steps: []nemesis.Step{
			{Fault: "kill", Target: "node:redis-1", WaitKey: "k0", WaitSlot: nemesis.AnySlot, For: 16 * time.Second, Failover: true},
			{Fault: "restart", Target: "node:redis-2,redis-3"},
		}},
		Precondition: "client A holds k0, acknowledged by a replica, from the moment redis-1 is killed until it is down",
		Clients:      3, Keys: []string{"k0"},
		TTL: 40 * time.Second, HoldMin: 36 * time.Second, HoldMax: 37 * time.Second, Pause: 200 * time.Millisecond,
		Time: 34 * time.Second, Settle: 40 * time.Second, MinAcquires: 3, CI: true,
	})
}
