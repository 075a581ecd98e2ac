package fakecluster

import "github.com/deadbolt-lab/deadbolt/endpoints"

// Endpoints are the current master as one independent master, for the
// workload's clients: the fake has no Sentinels to follow a failover.
func (c *Cluster) Endpoints() endpoints.Endpoints {
	c.mu.Lock()
	m := c.master
	c.mu.Unlock()
	logical := m.name + ":6379"
	return endpoints.Endpoints{Topology: endpoints.Independent, Masters: []string{logical}, Addresses: map[string]string{logical: m.Addr()}}
}
