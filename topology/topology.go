// Package topology names the shapes a run's Redis deployment takes and the
// roles of its nodes: the vocabulary that the cluster that starts the nodes,
// the endpoints that reach them and the nemesis that breaks them share, with
// the timings a topology's failover and health checks take. Spec describes
// the nodes a run starts, as a scenario file's "cluster" object holds it,
// and Duration is the duration type of a spec, written "1.5s". It imports
// only the standard library (deps_test.go), so a package that only speaks
// of topologies (a fault, a scenario file) pulls in neither Docker nor a
// Redis client, and the fake cluster (nemesis/nemesistest) does without
// Docker.
package topology

// Topology names, as Endpoints carry them and faults declare what they
// need.
const (
	// Sentinel is one master group that Sentinels manage: ask them for
	// the master.
	Sentinel = "sentinel"
	// Independent is one or more standalone masters, one lock group each.
	Independent = "independent"
	// Cluster is one Redis Cluster: one lock group, each key on the
	// master that owns its hash slot.
	Cluster = "cluster"
)

// MasterName is the Sentinel master group of the sentinel topology.
const MasterName = "deadbolt"
