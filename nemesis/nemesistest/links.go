package nemesistest

import (
	"fmt"

	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// With Options.LinkFaults, a proxy in this process (linkproxy) stands
// between each client slot and each Redis node, as in the container
// cluster, so a link fault hits one client's view of one node.

// Link is client slot's link to the named Redis node; it fails on a
// cluster started without Options.LinkFaults.
func (c *Cluster) Link(slot int, node string) (nemesis.Link, error) {
	if c.links == nil {
		return nil, fmt.Errorf("link from client %d to %s: the fake cluster was started without link faults (Options.LinkFaults)", slot, node)
	}
	n, err := c.redisNode(node)
	if err != nil {
		return nil, err
	}
	return c.links.Link(slot, n.name, n.Addr())
}
