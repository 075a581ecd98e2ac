package nemesistest

import (
	"maps"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/topology"
)

// Endpoints are how the workload's clients reach the fake: through its
// Sentinel on the sentinel topology (so they follow a failover), each
// master on the independent one, and the resource node if it has one.
// Logical addresses ("redis-2:6379") map to the nodes' real ports.
func (c *Cluster) Endpoints() endpoints.Endpoints {
	e := endpoints.Endpoints{Topology: c.opts.Topology, Addresses: map[string]string{}}
	for _, n := range c.nodes {
		e.Addresses[n.logical()] = n.Addr()
		if !c.failsOver() {
			e.Masters = append(e.Masters, n.logical())
		}
	}
	if c.sentinel != nil {
		e.MasterName, e.Sentinels = topology.MasterName, []string{sentinelName}
		e.Addresses[sentinelName] = c.sentinel.addr()
	}
	if c.resource != nil {
		e.Resource = c.resource.logical()
		e.Addresses[e.Resource] = c.resource.Addr()
	}
	return e
}

// EndpointsFor is how client slot reaches the nodes: through its own
// links with Options.LinkFaults, else as Endpoints.
func (c *Cluster) EndpointsFor(slot int) (endpoints.Endpoints, error) {
	e := c.Endpoints()
	if c.links == nil {
		return e, nil
	}
	e.Addresses = maps.Clone(e.Addresses)
	for _, n := range c.nodes {
		listen, err := c.links.Listen(slot, n.name, n.Addr())
		if err != nil {
			return endpoints.Endpoints{}, err
		}
		e.Addresses[n.logical()] = listen
	}
	return e, nil
}
