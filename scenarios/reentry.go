package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster"
)

// Re-entry, the point of a Redisson-style lock: clients call a locked
// function from inside another, so half their holds acquire the key again,
// nested, and work under the inner lease. No fault: the verdict is the
// lock's and the checkers' alone. A re-entry is one hold (the lock's hold
// count), so a correct lock is safe, and a checker that judged the nested
// grant a double hold would fail the scenario. A run in which no client
// re-entered is unknown.
func init() {
	nested := func(s Scenario) Scenario {
		s.Cluster, s.Nemesis, s.Reenter = cluster.Spec{Topology: cluster.Independent, Masters: 1}, "none", true
		s.Time, s.CI = 8*time.Second, true
		return s
	}
	register(nested(Scenario{
		Name: "reentrant-nested",
		Description: "Redisson-style reentrant lock whose holders re-enter the key they hold half the time and " +
			"increment a shared counter under the inner lease: one hold per client, no lost update",
		Expect: Safe, Lock: "reentrant", Workload: "counter",
		Clients: 4, Keys: []string{"k0"},
		TTL: time.Second, HoldMin: 20 * time.Millisecond, HoldMax: 100 * time.Millisecond, Pause: 20 * time.Millisecond,
	}))
	register(nested(Scenario{
		Name: "fair-nested",
		Description: "Redisson-style fair lock, five clients in its queue for one key, each re-entering the key it " +
			"holds half the time: a re-entry passes no queue, and every waiter is still granted in line",
		Expect: Safe, Lock: "fair",
		LockOptions: client.LockOptions{WaitMS: 1500},
		Clients:     5, Keys: []string{"k0"},
		TTL: 3 * time.Second, HoldMin: 50 * time.Millisecond, HoldMax: 200 * time.Millisecond,
	}))
}
