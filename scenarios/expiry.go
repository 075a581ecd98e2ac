package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
)

// Leases expire while their holders still work: a hold runs past the TTL
// half the time. No fault is injected, so a verdict is the lock's alone.
// With the owner-checked release an expired lease is a legal handoff that
// the checkers must not flag; releasing with a plain DEL deletes the next
// holder's lock and lets a third client in beside it.
func init() {
	expiring := func(s Scenario) Scenario {
		s.Cluster, s.Nemesis = cluster.Spec{Topology: cluster.Independent, Masters: 1}, "none"
		s.Clients, s.Keys = 6, []string{"k0", "k1"}
		s.TTL, s.HoldMin, s.HoldMax, s.Pause = 300*time.Millisecond, 100*time.Millisecond, 500*time.Millisecond, 20*time.Millisecond
		s.Time, s.CI = 8*time.Second, true
		return s
	}
	register(expiring(Scenario{
		Name: "expiry-simple",
		Description: "simple lock whose holders often outlive their 300 ms lease: another client taking an expired " +
			"lock is legal, and the owner-checked release never deletes someone else's lock",
		Expect: Safe, Lock: "simple",
	}))
	register(expiring(Scenario{
		Name: "expiry-del-no-owner",
		Description: "the same workload with the seeds' plain-DEL release: a holder whose lease expired deletes " +
			"the next holder's lock, and a third client gets in beside it",
		Expect: Unsafe, Lock: "del-no-owner",
	}))
}
