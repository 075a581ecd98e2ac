package cluster

import (
	"strconv"

	"github.com/deadbolt-lab/deadbolt/topology"
)

// Replication is how every lock-service Redis node of a topology treats its
// replicas (topology.Replication).
type Replication = topology.Replication

// replicationArgs are the redis-server arguments of a lock-service node;
// every topology's redisArgs applies them. Later arguments win in Redis.
func replicationArgs(r Replication) []string {
	sync := r.ReplDisklessSync
	if sync == "" {
		sync = "yes"
	}
	out := []string{"--repl-diskless-sync", sync}
	if r.MinReplicasToWrite > 0 {
		out = append(out,
			"--min-replicas-to-write", strconv.Itoa(r.MinReplicasToWrite),
			"--min-replicas-max-lag", strconv.Itoa(r.MinReplicasMaxLag))
	}
	return out
}
