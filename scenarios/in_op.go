package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// pause-get-then-del and crash-setnx-expire without the locks' help: the
// same two-command locks declaring no named points, as a lock of one's
// own would be, and the harness stopping or killing the client a seeded
// delay after it wrote the request, over the client's recent latency.
// Each strike lands between the lock's round trips only with some chance,
// so the step strikes fresh requests until one did the harm (a release
// that took effect after its lease expired; a key left taken past its
// lease), up to a bound, the delays spread over the latency; the run
// counts only if a strike landed inside the operation with the key seen
// held (checker/strikes.go).
func init() {
	register(Scenario{
		Name: "pause-in-release-get-then-del",
		Description: "a GET-compare-DEL release that declares no named points is stopped a seeded delay after the harness sent it, " +
			"for a TTL, until a stop lands between its GET and its DEL: the late DEL deletes the next holder's lock, and a third client gets in",
		Expect: Unsafe, Lock: "get-then-del-no-points",
		Cluster: cluster.Spec{Topology: cluster.Independent, Masters: 1},
		// A pause of one TTL outlasts the lease: the release comes at
		// least HoldMin after the acquire. Under CPU hogs a strike was late
		// about one time in six on the 2-core machine, hence 40.
		Nemesis: "pause-in-release", Fault: nemesis.Params{After: time.Second, Key: "k0", For: 300 * time.Millisecond, Strikes: 40},
		Precondition: "a release of k0 is stopped while its request is outstanding, with the key still held (another client refused it " +
			"during the stop), and resumed only after its lease's TTL passed",
		Clients: 4, Keys: []string{"k0"},
		TTL: 300 * time.Millisecond, HoldMin: 50 * time.Millisecond, HoldMax: 150 * time.Millisecond, Pause: 20 * time.Millisecond,
		Time: 27 * time.Second, CI: true,
	})
	register(Scenario{
		Name: "crash-in-acquire-setnx-expire",
		Description: "a SETNX-then-PEXPIRE acquire that declares no named points is killed a seeded delay after the harness sent it, " +
			"until a kill lands between its SETNX and its PEXPIRE: the key never gets a TTL and stays taken for the rest of the run",
		Expect: Unsafe, Lock: "setnx-expire-no-points",
		Cluster: cluster.Spec{Topology: cluster.Independent, Masters: 1},
		// Client 0 alone may ask for k0 while a strike waits for its
		// request, which goes out once nobody holds k0 or asks for it.
		// Under CPU hogs a kill left the key stuck about one time in six,
		// hence 40.
		Nemesis: "plan", Fault: nemesis.Params{Steps: []nemesis.Step{
			{Fault: "crash-in-acquire", Target: "client:0", Key: "k0", After: time.Second, Strikes: 40},
		}},
		Precondition: "client 0 is killed while its acquire of k0 is outstanding, after it took the key (another client was refused it)",
		Clients:      4, Keys: []string{"k0"},
		TTL: 300 * time.Millisecond, HoldMin: 50 * time.Millisecond, HoldMax: 150 * time.Millisecond, Pause: 20 * time.Millisecond,
		Time: 27 * time.Second, CI: true,
	})
}
