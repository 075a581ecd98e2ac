package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// Redis Cluster: a key lives on the master that serves its hash slot, and
// that master fails over by the cluster's own election, its replica
// promoted without what asynchronous replication had not yet carried.
func init() {
	// The keys whose slots the first of three masters serves (slots
	// 0-5460: CLUSTER KEYSLOT k2 is 449, k16 is 2987), so that the fault on
	// the primary key's master strikes every lock of the run.
	slotKeys := []string{"k2", "k3", "k6", "k7", "k12", "k16"}
	onCluster := func(s Scenario) Scenario {
		s.Cluster = cluster.Spec{Topology: cluster.RedisCluster}
		s.LockOptions = client.LockOptions{SlotRefreshMS: 1000}
		s.Clients, s.Keys = 8, slotKeys
		s.TTL, s.Time = 2*time.Second, 20*time.Second
		s.HoldMin, s.HoldMax, s.Pause = 100*time.Millisecond, 800*time.Millisecond, 50*time.Millisecond
		return s
	}
	// A master cut off from the cluster takes writes for about the node
	// timeout (2 s), then answers CLUSTERDOWN; a replica is promoted about
	// a second later. Clients learn of it when they re-read the slot map,
	// every second here (slot_refresh_ms; go-redis's default is 60 s, and
	// its clients would wait on CLUSTERDOWN that long). Holds take 3-4.5 s
	// of a 5 s lease, so the locks the old master granted in its last
	// writable seconds are still in use when the clients reach the new
	// master, which never heard of them. The cut lasts 8 s: healed at the
	// promotion, the old master kept cluster links that had been silent
	// through the cut and answered CLUSTERDOWN for about 47 s more.
	failedOver := func(s Scenario) Scenario {
		s = onCluster(s)
		s.TTL, s.HoldMin, s.HoldMax = 5*time.Second, 3*time.Second, 4500*time.Millisecond
		return s
	}
	register(failedOver(Scenario{
		Name: "cluster-failover-simple",
		Description: "simple SET NX lock on a Redis Cluster; the master of the keys' slots is cut off from its replica and " +
			"the other masters while clients still write to it, until the cluster promotes the replica without the locks " +
			"the old master granted in its last writable seconds; when they re-read the slot map, clients " +
			"reach the new master and take those locks again: two clients hold one lock",
		Expect: Unsafe, Lock: "simple", Nemesis: "isolate-primary", CI: true,
	}))
	register(failedOver(Scenario{
		Name: "cluster-failover-reentrant",
		Description: "Redisson-style reentrant lock (a hash of holds, a pub/sub wakeup) on a Redis Cluster, under the " +
			"cluster-failover-simple fault: the promoted replica lacks the holds the old master granted in its last " +
			"writable seconds, and two clients hold one lock",
		Expect: Unsafe, Lock: "reentrant", Nemesis: "isolate-primary",
	}))
	register(onCluster(Scenario{
		Name: "cluster-manual-failover-simple",
		Description: "simple SET NX lock on a Redis Cluster; an operator's CLUSTER FAILOVER on the replica of the keys' " +
			"slot master: the master stops taking writes until the replica has every one of them, then the replica " +
			"takes over and the old master answers MOVED; no granted lock is lost",
		Expect: Safe, Lock: "simple", Nemesis: "plan", CI: true,
		Fault: nemesis.Params{Steps: []nemesis.Step{{Fault: "cluster-failover", Target: "replica", After: 3 * time.Second}}},
	}))
	register(onCluster(Scenario{
		Name: "cluster-migrate-simple",
		Description: "simple SET NX lock on a Redis Cluster; the keys' slot is moved to another master while locks are " +
			"held (IMPORTING/MIGRATING, MIGRATE key by key, 300 ms apart): each key, with its TTL, is on one node or the " +
			"other, clients follow ASK and then MOVED, and no granted lock is lost",
		Expect: Safe, Lock: "simple", Nemesis: "plan", CI: true,
		Fault: nemesis.Params{Steps: []nemesis.Step{{Fault: "migrate-slot", Target: "primary", After: 3 * time.Second, By: 300 * time.Millisecond}}},
	}))
	// The remedies a Redis Cluster has: a master refuses writes it cannot
	// show a replica has (min-replicas-to-write 1, min-replicas-max-lag 1 s,
	// the least Redis takes), and WAIT 1 makes a grant count only once a
	// replica acknowledged it. With one replica per master, the promoted
	// replica has none of its own: it refuses every write (NOREPLICAS)
	// until the old master rejoins as its replica, after the heal.
	remedied := func(s Scenario) Scenario {
		s = failedOver(s)
		s.Cluster.Replication = cluster.Replication{MinReplicasToWrite: 1, MinReplicasMaxLag: 1}
		return s
	}
	register(remedied(Scenario{
		Name: "cluster-failover-minreplicas",
		Description: "cluster-failover-simple with min-replicas-to-write 1 and min-replicas-max-lag 1 on every node: the " +
			"cut-off master refuses writes (NOREPLICAS) once its replica's last acknowledgement is over a second old, and " +
			"the promoted replica, left with no replica, refuses every write until the old master rejoins 8 s after the " +
			"cut, past every lease the old master granted: no double hold, paid for with about 8 s without a grant. " +
			"Safe by timing, not by the remedy: a heal within the lease would let the new master grant a lost lock again",
		Expect: Safe, Lock: "simple", Nemesis: "isolate-primary",
	}))
	register(remedied(Scenario{
		Name: "cluster-failover-wait",
		Description: "cluster-failover-minreplicas with WAIT 1 after each SET NX (simple-wait): a grant counts only once the " +
			"replica has it, and the cluster promotes that replica, so on this fault no granted lock is lost (WAIT is no " +
			"consensus: a replica that acknowledged and then lost the write, or a promotion of another replica, still could); " +
			"the promoted replica refuses writes until the old master rejoins as its replica",
		Expect: Safe, Lock: "simple-wait", Nemesis: "isolate-primary", CI: true,
	}))
}
