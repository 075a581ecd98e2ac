// Package endpoints says where a run's Redis nodes are, as plain data a lock
// user builds its own connections from: the topology, the master groups,
// the Sentinels, the resource node, the credentials, and the published port
// of every logical address. It needs no Docker: cluster produces Endpoints,
// a client process receives them in its open request, and a lock's factory
// opens its connections over them (Dialer for any client library; Clients
// and ResourceClient for go-redis).
package endpoints

import (
	"fmt"
	"strconv"

	"github.com/deadbolt-lab/deadbolt/topology"
)

// Topology names (package topology's).
const (
	// Sentinel is one master group that Sentinels manage: ask them for
	// the master (MasterName, Sentinels).
	Sentinel = topology.Sentinel
	// Independent is one or more standalone masters (Masters), one lock
	// group each.
	Independent = topology.Independent
	// Cluster is one Redis Cluster (ClusterNodes are seeds): one lock
	// group, each key on the master that owns its hash slot.
	Cluster = topology.Cluster
)

// Endpoints is how a lock user reaches a run's nodes. Every address in it is
// logical ("redis-2:6379", as Redis and Sentinel name nodes); Addresses maps
// each to the port published on 127.0.0.1, the only way to reach a node.
type Endpoints struct {
	Topology string `json:"topology"`
	// MasterName and Sentinels name the Sentinel-managed group (Sentinel).
	MasterName string   `json:"master_name,omitempty"`
	Sentinels  []string `json:"sentinels,omitempty"`
	// Masters are the independent masters, one lock group each.
	Masters []string `json:"masters,omitempty"`
	// ClusterNodes are a Redis Cluster's nodes (Cluster), the seeds its
	// client asks for the slot map; every address the cluster announces
	// (MOVED, ASK, CLUSTER SLOTS) is one of them.
	ClusterNodes []string `json:"cluster_nodes,omitempty"`
	// Resource is the node holding the data the lock protects, if any.
	Resource string `json:"resource,omitempty"`
	// Username and Password authenticate to the Redis nodes (AUTH), when
	// set: the lock user on the nodes deadbolt starts (cluster.LockUser).
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// SentinelUsername and SentinelPassword authenticate to the Sentinels,
	// when set (deadbolt's own Sentinels always ask).
	SentinelUsername string `json:"sentinel_username,omitempty"`
	SentinelPassword string `json:"sentinel_password,omitempty"`
	// TLSCA, when set, is the PEM certificate of the authority that signed
	// every node's certificate: the nodes speak TLS only (tls.go).
	TLSCA string `json:"tls_ca,omitempty"`
	// Addresses maps each logical address to its published port.
	Addresses map[string]string `json:"addresses"`
}

// Groups is how many master groups a lock over these endpoints gets: one on
// the Sentinel and cluster topologies, one per master on the independent one.
func (e Endpoints) Groups() int {
	if e.Topology == Sentinel || e.Topology == Cluster {
		return 1
	}
	return len(e.Masters)
}

// Check rejects endpoints no lock could use: an unknown topology, a group
// without nodes, or a node without a published address (it could never be
// reached, and every request would fail as if the service were down).
func (e Endpoints) Check() error {
	switch e.Topology {
	case Sentinel:
		if e.MasterName == "" || len(e.Sentinels) == 0 {
			return fmt.Errorf("bad endpoints: the sentinel topology needs a master name and Sentinels")
		}
	case Independent:
		if len(e.Masters) == 0 {
			return fmt.Errorf("bad endpoints: the independent topology needs masters")
		}
	case Cluster:
		if len(e.ClusterNodes) == 0 {
			return fmt.Errorf("bad endpoints: the cluster topology needs cluster_nodes")
		}
	default:
		return fmt.Errorf("bad endpoints: unknown topology %q (known: %s, %s, %s)", e.Topology, Sentinel, Independent, Cluster)
	}
	if _, err := e.TLSConfig(); err != nil {
		return err
	}
	nodes := append(append(append([]string{}, e.Masters...), e.Sentinels...), e.ClusterNodes...)
	if e.Resource != "" {
		nodes = append(nodes, e.Resource)
	}
	for _, n := range nodes {
		if _, ok := e.Addresses[n]; !ok {
			return fmt.Errorf("bad endpoints: node %s has no entry in addresses", n)
		}
	}
	return nil
}

// Unreachable is n independent masters that refuse every connection (a
// closed port): what locks.Fits builds a lock over to learn, without any
// I/O, whether it runs over n master groups.
func Unreachable(n int) Endpoints {
	e := Endpoints{Topology: Independent, Addresses: map[string]string{}}
	for i := 1; i <= n; i++ {
		m := "unreachable-" + strconv.Itoa(i) + ":6379"
		e.Masters = append(e.Masters, m)
		e.Addresses[m] = "127.0.0.1:1"
	}
	return e
}

// UnreachableOn is Unreachable for the one master group of the Sentinel or
// cluster topology (for locks.RunsOn); other topologies get Unreachable(1).
func UnreachableOn(topology string) Endpoints {
	e := Unreachable(1)
	switch topology {
	case Sentinel:
		e.Topology, e.MasterName, e.Sentinels, e.Masters = Sentinel, "unreachable", e.Masters, nil
	case Cluster:
		e.Topology, e.ClusterNodes, e.Masters = Cluster, e.Masters, nil
	}
	return e
}
