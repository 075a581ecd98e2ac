package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// A client crashes (SIGKILL of its process) while it holds the lock: it
// never releases. A lease frees the key after the TTL; a lock without one
// keeps it taken forever, a liveness failure rather than a double hold.
func init() {
	crashed := func(s Scenario) Scenario {
		s.Cluster = cluster.Spec{Topology: cluster.Independent, Masters: 1}
		s.Clients, s.Keys = 4, []string{"k0"}
		s.TTL, s.HoldMin, s.HoldMax, s.Pause = time.Second, 50*time.Millisecond, 150*time.Millisecond, 20*time.Millisecond
		s.Time, s.CI = 6*time.Second, true
		return s
	}
	register(crashed(Scenario{
		Name: "crash-simple",
		Description: "the holder of a simple SET NX PX lock is killed (SIGKILL) inside its critical section: " +
			"it never releases, the TTL frees the key, and the others go on",
		Expect: Safe, Lock: "simple", Workload: "counter",
		Nemesis: "crash-client", Fault: nemesis.Params{After: time.Second, Key: "k0", On: history.Read},
		Precondition: "the holder of k0 is killed between its read of the counter and its write, its lease held while it dies",
	}))
	register(crashed(Scenario{
		Name: "crash-redispy",
		Description: "the crash-simple crash against redis-py's own Lock in a Python client (drivers/redispy): " +
			"the holder is killed inside its critical section, the lock's timeout frees the key, and the others go on",
		Expect: Safe, Lock: "redispy", Driver: "redispy", Workload: "counter",
		Nemesis: "crash-client", Fault: nemesis.Params{After: time.Second, Key: "k0", On: history.Read},
		Precondition: "the holder of k0 is killed between its read of the counter and its write, its lease held while it dies",
	}))
	register(crashed(Scenario{
		Name: "crash-no-ttl",
		Description: "the holder of a lock without expiry (the seeds' no-ttl) is killed: the key stays taken " +
			"for the rest of the run, a liveness failure",
		Expect: Unsafe, Lock: "no-ttl",
		Nemesis: "crash-client", Fault: nemesis.Params{After: time.Second, Key: "k0"},
		Precondition: "the holder of k0 is killed while it holds the lock",
	}))
	register(crashed(Scenario{
		Name: "crash-setnx-expire",
		Description: "a client of the seeds' setnx-expire is killed between its SETNX and its EXPIRE: the key " +
			"never gets a TTL and stays taken for the rest of the run",
		Expect: Unsafe, Lock: "setnx-expire",
		// Client 0 alone may ask for k0 once it is armed, so that no other
		// client's grant keeps it from its SETNX.
		Nemesis: "plan", Fault: nemesis.Params{Steps: []nemesis.Step{
			{Fault: "crash-client", Target: "client:0", Key: "k0", Point: "after-setnx", After: time.Second},
		}},
		Precondition: "client 0 is killed where it stopped itself, between its SETNX of k0 and its EXPIRE",
	}))
}
