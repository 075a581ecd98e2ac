package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// The Redlock debate's restart: client A holds RedLock on a bare majority
// (redis-1..3: its links to redis-4 and redis-5 are cut for the whole run),
// and redis-3 restarts. Without persistence it forgets A's key, and client B
// takes redis-3..5, a majority of its own, while A still holds the lock.
// antirez's remedies: fsync the AOF, or keep the node down past the TTL.
// The schedule waits for A's grant, so a reproduction is not luck. Holds
// outlast a restart (about 2 s of docker kill and start), and the two
// clients wait up to 500 ms between attempts, so that A, whose attempts
// wait out its cut links, is not starved by B.
func init() {
	restarted := func(s Scenario, restart nemesis.Step) Scenario {
		s.Cluster.Topology, s.Cluster.Masters, s.Cluster.LinkFaults = cluster.Independent, 5, true
		s.Lock, s.Workload, s.Nemesis = "redlock", "counter", "plan"
		restart.Target, restart.WaitKey, restart.WaitSlot = "node:redis-3", "k0", 0
		s.Fault = nemesis.Params{Steps: []nemesis.Step{
			{Fault: "link-cut", Target: "link:0:redis-4,redis-5"},
			restart,
		}}
		s.Clients, s.Keys = 2, []string{"k0"}
		s.TTL, s.HoldMin, s.HoldMax, s.Pause = 8*time.Second, 3*time.Second, 3500*time.Millisecond, 500*time.Millisecond
		s.Time, s.CI = 45*time.Second, true
		return s
	}
	register(restarted(Scenario{
		Name: "restart-redlock",
		Description: "RedLock on five masters without persistence: client A holds redis-1..3 (its links to 4 and 5 are cut), " +
			"redis-3 restarts at once and forgets A's key, and client B takes redis-3..5 while A still holds the lock",
		Expect: Unsafe,
	}, nemesis.Step{Fault: "restart"}))
	register(restarted(Scenario{
		Name: "restart-redlock-fsync",
		Description: "the same restart with the AOF fsynced on every write (appendfsync always): redis-3 comes back " +
			"with A's key, and B never gets a majority while A holds the lock",
		Expect:  Safe,
		Cluster: cluster.Spec{Persistence: cluster.PersistAlways},
	}, nemesis.Step{Fault: "restart"}))
	register(restarted(Scenario{
		Name: "restart-redlock-delayed",
		Description: "the same restart without persistence, but redis-3 stays down for longer than the TTL " +
			"(antirez's delayed restart): every lease it granted has expired by the time it forgets them",
		Expect: Safe,
	}, nemesis.Step{Fault: "kill", For: 9 * time.Second}))
}
