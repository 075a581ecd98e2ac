package topology

import (
	"fmt"
	"time"
)

// Spec describes the nodes a run starts: a scenario file's "cluster"
// object, and a stored run's (scenario.json), in snake_case with durations
// as Go duration strings ({"topology": "sentinel", "down_after": "3s"}).
// Unset fields take the topology's defaults (Defaults). Runs stored before
// the fields had JSON names wrote them capitalised ("DownAfter" in
// nanoseconds); scenarios reads those too.
type Spec struct {
	Topology string `json:"topology"`
	// Masters is the number of standalone masters (independent), or of
	// shards (cluster).
	Masters int `json:"masters,omitempty"`
	// Replicas and Sentinels size the sentinel topology; Replicas is also
	// each shard's replicas on the cluster topology.
	Replicas  int `json:"replicas,omitempty"`
	Sentinels int `json:"sentinels,omitempty"`
	Quorum    int `json:"quorum,omitempty"`
	// DownAfter is Sentinel's down-after-milliseconds, or the cluster's
	// cluster-node-timeout: how long a node is silent before it is judged
	// down.
	DownAfter Duration `json:"down_after,omitempty"`
	// PrimaryKey is, on the cluster topology, the key whose hash slot's
	// master is the primary (Master): the node the nemesis aims at and
	// whose failover it waits for. Scenarios set their first lock key.
	PrimaryKey string `json:"primary_key,omitempty"`
	// Resource starts one more standalone node for the data a workload
	// protects. It is never faulted: damage there is the lock's doing.
	Resource bool `json:"resource,omitempty"`
	// Persistence is how lock-service nodes keep their data across a
	// restart: PersistNone (the default), PersistEverySec or PersistAlways.
	Persistence Persistence `json:"persistence,omitempty"`
	// Replication is how lock-service nodes treat their replicas
	// (min-replicas-to-write and its lag, diskless sync), on every topology.
	Replication
	// LinkFaults puts a proxy between each client slot and each lock-service
	// node, so that a link can be delayed or cut in one client's view of
	// one node; clients then connect through the proxies.
	LinkFaults bool `json:"link_faults,omitempty"`
	// ClockFaults runs each lock-service Redis under clockshift, so that
	// its wall clock can be moved.
	ClockFaults bool `json:"clock_faults,omitempty"`
	// TLS makes every node listen for TLS only, with certificates drawn
	// for the run, and speak TLS to its peers; clients get the CA in their
	// endpoints.
	TLS bool `json:"tls,omitempty"`
	// Image is the Redis image the nodes run; "" is Image().
	Image string `json:"image,omitempty"`
}

// Defaults fills unset fields: 1 master + 2 replicas + 3 Sentinels with
// quorum 2 and a 1 s down-after, or 5 independent masters, or a cluster of
// 3 masters with 1 replica each and a 2 s node timeout.
func (s Spec) Defaults() Spec {
	if s.Topology == Cluster {
		if s.Masters == 0 {
			s.Masters = 3
		}
		if s.Replicas == 0 {
			s.Replicas = 1
		}
		if s.DownAfter == 0 {
			s.DownAfter = Duration(2 * time.Second)
		}
	}
	if s.Masters == 0 {
		s.Masters = 5
	}
	if s.Replicas == 0 {
		s.Replicas = 2
	}
	if s.Sentinels == 0 {
		s.Sentinels = 3
	}
	if s.Quorum == 0 {
		s.Quorum = 2
	}
	if s.DownAfter == 0 {
		s.DownAfter = Duration(time.Second)
	}
	if s.Image == "" {
		s.Image = Image()
	}
	s.Replication = s.Replication.withDefaults()
	return s
}

// Validate rejects a spec that cannot start (or would start a cluster that
// refuses every write), with defaults filled: a cluster runs it before it
// starts, and a scenario before anything starts.
func (s Spec) Validate() error {
	s = s.Defaults()
	if err := s.Persistence.validate(); err != nil {
		return err
	}
	if err := s.Replication.check(s.replicasPerMaster()); err != nil {
		return err
	}
	switch s.Topology {
	case Sentinel:
		if s.Replicas < 1 || s.Sentinels < 1 || s.Quorum < 1 || s.Quorum > s.Sentinels {
			return fmt.Errorf("sentinel topology needs replicas >= 1 and 1 <= quorum <= sentinels (got %d replicas, %d sentinels, quorum %d)", s.Replicas, s.Sentinels, s.Quorum)
		}
	case Independent:
		if s.Masters < 1 {
			return fmt.Errorf("independent topology needs at least one master, got %d", s.Masters)
		}
	case Cluster:
		// A failover needs the votes of a majority of masters, the failed
		// one not among them.
		if s.Masters < 3 || s.Replicas < 1 {
			return fmt.Errorf("cluster topology needs at least 3 masters and 1 replica each (got %d masters, %d replicas)", s.Masters, s.Replicas)
		}
	default:
		return fmt.Errorf("unknown topology %q (known: %s, %s, %s)", s.Topology, Sentinel, Independent, Cluster)
	}
	return nil
}

// replicasPerMaster is how many replicas each master of the topology has.
func (s Spec) replicasPerMaster() int {
	if s.Topology == Independent {
		return 0
	}
	return s.Replicas
}

// NodeNames are the names of every node the spec starts, in start order:
// on the cluster topology the masters first, then the replicas, replica k
// following master k mod Masters; the resource node last.
func (s Spec) NodeNames() []string {
	var names []string
	redis := func(n int) {
		for i := 1; i <= n; i++ {
			names = append(names, fmt.Sprintf("redis-%d", i))
		}
	}
	switch s.Topology {
	case Sentinel:
		redis(1 + s.Replicas)
		for i := 1; i <= s.Sentinels; i++ {
			names = append(names, fmt.Sprintf("sentinel-%d", i))
		}
	case Independent:
		redis(s.Masters)
	case Cluster:
		redis(s.Masters * (1 + s.Replicas))
	}
	if s.Resource {
		names = append(names, ResourceName)
	}
	return names
}

// Containers is how many containers a cluster of the spec starts.
func (s Spec) Containers() int { return len(s.Defaults().NodeNames()) }

// FailoverWithin is how long after a master falls silent the topology's own
// failover machinery has had two tries to replace it (FailoverWithin), with
// the default down-after or node timeout when the spec sets none.
func (s Spec) FailoverWithin() time.Duration {
	s = s.Defaults()
	return FailoverWithin(s.Topology, s.DownAfter.D())
}

// HealthTimeout is how long a health check after a heal waits for the
// deployment to agree (HealthTimeout).
func (s Spec) HealthTimeout() time.Duration {
	return HealthTimeout(s.Topology)
}

// Poolable says whether a spec's clusters may be kept for another run:
// nodes that persist keep an append-only file of every earlier run's
// writes.
func (s Spec) Poolable() bool {
	return s.Persistence == "" || s.Persistence == PersistNone
}
