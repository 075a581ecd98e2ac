package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// The Redlock debate's clock jump: client A holds RedLock on redis-1..3
// (its links to redis-4 and redis-5 are cut), and redis-3's wall clock
// jumps forward past the TTL, so A's key expires there early; client B
// takes redis-3..5 while A still holds the lock. RedLock assumes clocks
// that advance at about the same rate; an operator's or NTP's step breaks it.
func init() {
	register(Scenario{
		Name: "clock-jump-redlock",
		Description: "RedLock on five masters: client A holds redis-1..3 (its links to 4 and 5 are cut), redis-3's clock " +
			"jumps forward past the TTL so A's key expires there, and client B takes redis-3..5 while A still holds the lock",
		Expect: Unsafe, Lock: "redlock", Workload: "counter", Nemesis: "plan",
		Cluster: cluster.Spec{Topology: cluster.Independent, Masters: 5, LinkFaults: true, ClockFaults: true},
		Fault: nemesis.Params{Steps: []nemesis.Step{
			{Fault: "link-cut", Target: "link:0:redis-4,redis-5"},
			{Fault: "clock-jump", Target: "node:redis-3", WaitKey: "k0", WaitSlot: 0, By: 16 * time.Second},
		}},
		Precondition: "client A (slot 0) holds the lock on redis-1..3 only (its links to redis-4 and redis-5 cut before it asked) " +
			"when redis-3's clock jumps",
		Clients: 2, Keys: []string{"k0"},
		TTL: 8 * time.Second, HoldMin: time.Second, HoldMax: 1500 * time.Millisecond, Pause: 500 * time.Millisecond,
		Time: 12 * time.Second, CI: true,
	})
}
