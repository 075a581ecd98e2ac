package cluster

import (
	"fmt"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/internal/linkproxy"
)

// A cluster started with Spec.LinkFaults puts a proxy of its own
// (linkproxy) between each client slot and each lock-service node (Redis
// and Sentinel). The resource node is reached directly: it is never
// faulted.

// Link is the path from one client slot to one node.
type Link = linkproxy.Link

// faultable reports the nodes a link fault may sit in front of.
func faultable(n *Node) bool { return n.Role == RoleRedis || n.Role == RoleSentinel }

// EndpointsFor is how client slot client reaches the nodes: through its own
// links when the cluster has link faults, else as Endpoints.
func (c *Cluster) EndpointsFor(client int) (endpoints.Endpoints, error) {
	e := c.Endpoints()
	if c.links == nil {
		return e, nil
	}
	for _, n := range c.Nodes {
		if !faultable(n) {
			continue
		}
		listen, err := c.links.Listen(client, n.Name, n.Addr())
		if err != nil {
			return endpoints.Endpoints{}, err
		}
		e.Addresses[n.Logical()] = listen
	}
	return e, nil
}

// Link returns the link from client slot client to the named node.
func (c *Cluster) Link(client int, node string) (*Link, error) {
	if c.links == nil {
		return nil, fmt.Errorf("link from client %d to %s: the cluster was started without link faults (Spec.LinkFaults)", client, node)
	}
	n, err := c.Node(node)
	if err != nil {
		return nil, err
	}
	if !faultable(n) {
		return nil, fmt.Errorf("link from client %d to %s: the %s node is never faulted", client, node, n.Role)
	}
	return c.links.Link(client, n.Name, n.Addr())
}
