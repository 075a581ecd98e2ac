package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// The master hangs (docker pause: a long GC, swap, a stopped VM) rather
// than being cut off: clients' calls to it time out instead of landing, so
// it takes no lock the replicas lack, Sentinel promotes a replica, and the
// thawed old master is demoted and resyncs.
func init() {
	register(Scenario{
		Name: "pause-node-simple",
		Description: "simple SET NX lock on Sentinel; the master is frozen (docker pause) for 8 s: Sentinel promotes " +
			"a replica that has every lock the frozen master granted, since a frozen master grants none",
		Expect: Safe, Lock: "simple",
		Cluster: cluster.Spec{Topology: cluster.Sentinel},
		Nemesis: "plan", Fault: nemesis.Params{Steps: []nemesis.Step{
			{Fault: "pause-node", Target: "primary", After: 3 * time.Second, For: 8 * time.Second, Failover: true},
		}},
		Clients: 8, Keys: []string{"k0", "k1", "k2"},
		TTL: 2 * time.Second, HoldMin: 100 * time.Millisecond, HoldMax: 800 * time.Millisecond, Pause: 50 * time.Millisecond,
		Time: 20 * time.Second, CI: true,
	})
}
