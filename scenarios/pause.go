package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// Kleppmann's argument: a client stops (a GC pause, a page fault, a
// descheduled VM) after it took the lock and read the data, its lease runs
// out while it sleeps, another client takes the lock and works, and the
// sleeper wakes up and writes anyway. No lock fixes that by itself; a
// resource that checks fencing tokens does. The pause is a real SIGSTOP of
// the client's process, its lock's timers and watchdog included, aimed at
// the holder of k0 the moment it has read the register.
func init() {
	paused := func(s Scenario) Scenario {
		if s.Cluster.Topology == "" {
			s.Cluster = cluster.Spec{Topology: cluster.Independent, Masters: 1}
		}
		if s.Workload == "" {
			s.Workload = "counter"
		}
		s.Nemesis = "pause-client"
		s.Fault = nemesis.Params{After: time.Second, Key: "k0", On: history.Read}
		s.Precondition = "the holder of k0 is stopped between its read of the counter and its write, its lease held while the pause strikes"
		s.Clients, s.Keys = 4, []string{"k0"}
		s.TTL, s.HoldMin, s.HoldMax, s.Pause = time.Second, 50*time.Millisecond, 150*time.Millisecond, 20*time.Millisecond
		s.Time, s.CI = 6*time.Second, true
		return s
	}
	register(paused(Scenario{
		Name: "pause-simple",
		Description: "the holder of a simple SET NX lock is paused (SIGSTOP) for twice the TTL between reading a counter " +
			"and writing it back; the lease expires, others increment, and the sleeper's write destroys their updates",
		Expect: Unsafe, Lock: "simple",
	}))
	register(paused(Scenario{
		Name: "pause-redispy",
		Description: "the pause-simple pause against redis-py's own Lock in a Python client (drivers/redispy): " +
			"the lease expires while the holder sleeps, others increment, and the sleeper's write destroys their updates",
		Expect: Unsafe, Lock: "redispy", Driver: "redispy",
	}))
	register(paused(Scenario{
		Name: "pause-reentrant",
		Description: "the same pause against the Redisson-style lock with a watchdog: the pause freezes the watchdog " +
			"with its process, so the lease expires all the same and the sleeper's write destroys updates",
		Expect: Unsafe, Lock: "reentrant",
	}))
	register(paused(Scenario{
		Name: "pause-redlock",
		Description: "the same pause against RedLock on five independent masters: a quorum does not help a client " +
			"that stops past its validity, and the sleeper's write destroys updates",
		Expect: Unsafe, Lock: "redlock", Cluster: cluster.Spec{Topology: cluster.Independent, Masters: 5},
	}))
	register(paused(Scenario{
		Name: "pause-fenced",
		Description: "the same pause with a fencing token from the lock and a register that rejects a token lower " +
			"than the highest it has seen: the sleeper's stale write is rejected and no update is lost",
		Expect: Safe, Lock: "fenced", Workload: "fenced",
	}))
}
