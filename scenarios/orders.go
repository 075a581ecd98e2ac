package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
)

// What the failover's lost locks cost a shop: the seeds' flash sale, one
// order per user under lock:order:<user>, on a Sentinel-managed master cut
// off from its replicas.
func init() {
	register(Scenario{
		Name: "orders-failover",
		Description: "the seeds' flash sale (one order per user under lock:order:<user>) on a simple lock whose " +
			"master is isolated and replaced by a replica without the newest locks: two clients hold one user's " +
			"lock and the user orders twice",
		Expect: Unsafe, Lock: "simple", Workload: "orders",
		Cluster: cluster.Spec{Topology: cluster.Sentinel}, Nemesis: "isolate-primary",
		Clients: 8, TTL: 2 * time.Second,
		HoldMin: 100 * time.Millisecond, HoldMax: 800 * time.Millisecond, Pause: 50 * time.Millisecond,
		Time: 20 * time.Second, CI: true,
	})
}
