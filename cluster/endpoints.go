package cluster

import (
	"maps"

	"github.com/deadbolt-lab/deadbolt/endpoints"
)

// Endpoints snapshots the cluster's addresses as a lock user's connection
// targets. Published ports are pinned, so the snapshot stays right across
// kills and restarts.
func (c *Cluster) Endpoints() endpoints.Endpoints {
	if c.target != nil {
		e := *c.target
		e.Addresses = maps.Clone(c.target.Addresses)
		return e
	}
	e := endpoints.Endpoints{Topology: c.Spec.Topology, Addresses: map[string]string{}}
	for _, n := range c.Nodes {
		e.Addresses[n.Logical()] = n.Addr()
		switch {
		case n.Role == RoleSentinel:
			e.Sentinels = append(e.Sentinels, n.Logical())
		case n.Role == RoleResource:
			e.Resource = n.Logical()
		case n.Role == RoleRedis && c.Spec.Topology == Independent:
			e.Masters = append(e.Masters, n.Logical())
		case n.Role == RoleRedis && c.Spec.Topology == RedisCluster:
			e.ClusterNodes = append(e.ClusterNodes, n.Logical())
		}
	}
	// Lock users authenticate as LockUser, to the Redis nodes and to the
	// Sentinels alike.
	e.Username, e.Password = LockUser, c.secrets.Lock
	if c.certs != nil {
		e.TLSCA = string(c.certs.ca)
	}
	if c.Spec.Topology == Sentinel {
		e.MasterName = MasterName
		e.SentinelUsername, e.SentinelPassword = LockUser, c.secrets.Lock
	}
	return e
}
