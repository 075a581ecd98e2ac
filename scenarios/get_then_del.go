package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// The seeds' get-then-del release checks the owner with GET and deletes
// with DEL, two commands. A client paused between them (stopped at the
// named point inside the lock) wakes after its lease expired and another
// client took the lock, and its DEL removes that client's lock: a third
// client gets in beside the second.
func init() {
	register(Scenario{
		Name: "pause-get-then-del",
		Description: "a get-then-del client stops between the GET that saw its own token and the DEL, for twice " +
			"the TTL; the lease passes to another client, the late DEL deletes that client's lock, and a third gets in",
		Expect: Unsafe, Lock: "get-then-del", Workload: "counter",
		Cluster: cluster.Spec{Topology: cluster.Independent, Masters: 1},
		// The pause ends at the next grant of k0, and that holder is held
		// there until the sleeper's DEL has landed: the DEL finds the next
		// holder's lock, not a key between holds or mid-release.
		Nemesis: "pause-at", Fault: nemesis.Params{After: time.Second, Key: "k0", Point: "after-get", Handoff: true},
		Precondition: "the holder of k0 stops itself between the GET that saw its own token and its DEL, " +
			"and wakes while the next holder of k0 holds it",
		Clients: 6, Keys: []string{"k0"},
		TTL: time.Second, HoldMin: 200 * time.Millisecond, HoldMax: 400 * time.Millisecond, Pause: 5 * time.Millisecond,
		Time: 6 * time.Second, CI: true,
	})
}
