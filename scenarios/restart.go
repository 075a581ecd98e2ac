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
// Nothing is left to a race: the links are cut before any client asks,
// only A may ask for k0 until the restart has struck (B waits at the gate),
// and A is held at its grant until redis-3 is back, then works for 1-1.5 s
// under a lease of 8 s, while B asks for k0 at once.
func init() {
	restarted := func(s Scenario, restart nemesis.Step) Scenario {
		s.Cluster.Topology, s.Cluster.Masters, s.Cluster.LinkFaults = cluster.Independent, 5, true
		s.Lock, s.Workload, s.Nemesis = "redlock", "counter", "plan"
		restart.Target, restart.WaitKey, restart.WaitSlot = "node:redis-3", "k0", 0
		s.Fault = nemesis.Params{Steps: []nemesis.Step{
			{Fault: "link-cut", Target: "link:0:redis-4,redis-5"},
			restart,
		}}
		s.Precondition = "client A (slot 0) holds the lock on redis-1..3 only (its links to redis-4 and redis-5 cut before it asked) " +
			"from the moment redis-3 goes down until it is back"
		s.Clients, s.Keys = 2, []string{"k0"}
		s.TTL, s.HoldMin, s.HoldMax, s.Pause = 8*time.Second, time.Second, 1500*time.Millisecond, 500*time.Millisecond
		s.Time, s.CI = 12*time.Second, true
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
	}, nemesis.Step{Fault: "kill", For: time.Second, TTLs: 1}))
}
