package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// Soak runs: the random schedule draws one fault at a time from a mix, on
// seed-chosen targets. Whether a violation shows depends on where the
// faults fall, so these stay out of the CI suite; a run's verdict is what
// that seed found, not a property of the lock.
func init() {
	register(Scenario{
		Name: "random-redlock",
		Description: "soak: RedLock on five masters under a seeded mix of kills, immediate restarts, frozen nodes, " +
			"clock jumps, late replies and paused clients, one at a time; not in CI (the verdict depends on the seed)",
		Expect: Unsafe, Lock: "redlock", Workload: "counter",
		Cluster: cluster.Spec{Topology: cluster.Independent, Masters: 5},
		Nemesis: "random", Fault: nemesis.Params{
			Faults: []string{"kill", "restart", "pause-node", "clock-jump", "link-delay", "pause-client"},
			Every:  2 * time.Second,
		},
		Clients: 4, Keys: []string{"k0", "k1"},
		TTL: 2 * time.Second, HoldMin: 100 * time.Millisecond, HoldMax: 500 * time.Millisecond, Pause: 50 * time.Millisecond,
		Time: 60 * time.Second,
	})
	register(Scenario{
		Name: "random-reentrant",
		Description: "soak: the Redisson-style lock with a watchdog on Sentinel under a seeded mix of master isolation, " +
			"kills, frozen nodes, graceful failovers and paused clients, one at a time; not in CI (the verdict depends on the seed)",
		Expect: Unsafe, Lock: "reentrant", Workload: "counter",
		Cluster: cluster.Spec{Topology: cluster.Sentinel},
		Nemesis: "random", Fault: nemesis.Params{
			Faults: []string{"isolate-primary", "kill", "pause-node", "sentinel-failover", "pause-client"},
			Every:  3 * time.Second, For: 8 * time.Second,
		},
		Clients: 4, Keys: []string{"k0", "k1"},
		TTL: 2 * time.Second, HoldMin: 100 * time.Millisecond, HoldMax: 500 * time.Millisecond, Pause: 50 * time.Millisecond,
		Time: 60 * time.Second,
	})
}
