package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
)

// The Redlock debate's first question: what does a master failover do to a
// lock? Both scenarios share the workload so their verdicts compare.
func init() {
	register(Scenario{
		Name: "failover-simple",
		Description: "simple SET NX lock on a Sentinel-managed master; the master is cut off from its replicas " +
			"and Sentinels while clients still write to it, a replica is promoted without the newest locks: " +
			"asynchronous replication loses them and two clients hold one lock",
		Expect:  Unsafe,
		Lock:    "simple",
		Cluster: cluster.Spec{Topology: cluster.Sentinel},
		Nemesis: "isolate-primary",
		Clients: 8, Keys: []string{"k0", "k1", "k2"},
		TTL: 2 * time.Second, HoldMin: 100 * time.Millisecond, HoldMax: 800 * time.Millisecond,
		Pause: 50 * time.Millisecond,
		Time:  16 * time.Second,
		CI:    true,
	})
	register(Scenario{
		Name: "failover-redlock",
		Description: "RedLock on five independent masters; a minority is killed and restarted empty only after " +
			"the TTL: a quorum never loses a valid lease",
		Expect:  Safe,
		Lock:    "redlock",
		Cluster: cluster.Spec{Topology: cluster.Independent, Masters: 5},
		Nemesis: "kill-minority",
		Clients: 8, Keys: []string{"k0", "k1", "k2"},
		TTL: 3 * time.Second, HoldMin: 100 * time.Millisecond, HoldMax: 800 * time.Millisecond,
		Pause: 50 * time.Millisecond,
		Time:  12 * time.Second,
		CI:    true,
	})
}
