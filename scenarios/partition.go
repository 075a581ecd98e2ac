package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// A network that splits clients between nodes: client 0 reaches only
// redis-1..3, client 1 only redis-3..5, client 2 all five. Each of the
// first two sees a bare majority, and the majorities overlap in redis-3,
// so RedLock's quorum should still keep them apart.
func init() {
	register(Scenario{
		Name: "partition-redlock",
		Description: "RedLock on five masters; client A reaches only redis-1..3 and client B only redis-3..5 " +
			"for the whole run: both can win a majority, and any two majorities share a node",
		Expect: Safe, Lock: "redlock", Workload: "counter",
		Cluster: cluster.Spec{Topology: cluster.Independent, Masters: 5, LinkFaults: true},
		Nemesis: "plan", Fault: nemesis.Params{Steps: []nemesis.Step{
			{Fault: "link-cut", Target: "link:0:redis-4,redis-5"},
			{Fault: "link-cut", Target: "link:1:redis-1,redis-2"},
		}},
		Precondition: "both links are cut before any client asks for the lock",
		Clients:      3, Keys: []string{"k0"},
		TTL: 2 * time.Second, HoldMin: 100 * time.Millisecond, HoldMax: 300 * time.Millisecond, Pause: 100 * time.Millisecond,
		Time: 15 * time.Second, CI: true,
	})
}
