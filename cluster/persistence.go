package cluster

import "github.com/deadbolt-lab/deadbolt/topology"

// Persistence is what a lock-service node keeps across a restart
// (topology.Persistence).
type Persistence = topology.Persistence

const (
	PersistNone     = topology.PersistNone
	PersistEverySec = topology.PersistEverySec
	PersistAlways   = topology.PersistAlways
)

// persistenceArgs override redisArgs's "keep nothing"; later arguments win
// in Redis.
func persistenceArgs(p Persistence) []string {
	switch p {
	case PersistEverySec, PersistAlways:
		return []string{"--appendonly", "yes", "--appendfsync", string(p)}
	}
	return nil
}
