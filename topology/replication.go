package topology

import "fmt"

// Replication is how every lock-service Redis node of a topology treats its
// replicas: the settings teams turn on against lost writes, under their
// redis.conf names. The zero value is what deadbolt ran before they could
// be set: no write is held back for replicas, and full syncs go over the
// socket. Spec embeds it, so a run's scenario.json records the fields that
// are set beside the other topology options.
type Replication struct {
	// MinReplicasToWrite makes a master refuse writes (NOREPLICAS) while
	// fewer replicas than this have acknowledged the replication stream
	// within MinReplicasMaxLag. 0: off.
	MinReplicasToWrite int `json:"min_replicas_to_write,omitempty"`
	// MinReplicasMaxLag is that lag in seconds, the unit Redis takes (1 is
	// the least it can express); 0 with MinReplicasToWrite set is Redis's
	// default, 10, which Defaults writes in.
	MinReplicasMaxLag int `json:"min_replicas_max_lag,omitempty"`
	// ReplDisklessSync is "yes" (the default, also when empty): a full sync
	// streams the snapshot over the socket; "no" writes it to disk first.
	ReplDisklessSync string `json:"repl_diskless_sync,omitempty"`
}

// redisDefaultMaxLag is Redis's own min-replicas-max-lag.
const redisDefaultMaxLag = 10

func (r Replication) withDefaults() Replication {
	if r.MinReplicasToWrite > 0 && r.MinReplicasMaxLag == 0 {
		r.MinReplicasMaxLag = redisDefaultMaxLag
	}
	return r
}

// check rejects settings Redis would refuse or ignore, and a quorum of
// replicas no master of the topology has (replicas per master), under
// which every write would be refused.
func (r Replication) check(replicas int) error {
	switch {
	case r.MinReplicasToWrite < 0:
		return fmt.Errorf("min-replicas-to-write must be 0 (off) or more, got %d", r.MinReplicasToWrite)
	case r.MinReplicasMaxLag < 0:
		return fmt.Errorf("min-replicas-max-lag must be 1 s or more, got %d", r.MinReplicasMaxLag)
	case r.MinReplicasMaxLag > 0 && r.MinReplicasToWrite == 0:
		return fmt.Errorf("min-replicas-max-lag %d without min-replicas-to-write: Redis ignores the lag unless min-replicas-to-write is set", r.MinReplicasMaxLag)
	case r.MinReplicasToWrite > replicas:
		return fmt.Errorf("min-replicas-to-write %d, and each master has %d replica(s): every write would be refused", r.MinReplicasToWrite, replicas)
	}
	switch r.ReplDisklessSync {
	case "", "yes", "no":
	default:
		return fmt.Errorf("repl-diskless-sync must be yes or no, got %q", r.ReplDisklessSync)
	}
	return nil
}
