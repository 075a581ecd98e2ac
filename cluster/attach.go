package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/internal/linkproxy"
)

// Attach is a Cluster over an existing deployment that deadbolt did not
// start (`deadbolt run --target FILE`): its nodes are known only by the
// addresses in target, no container or network is created, and nothing is
// ever done to a node but Redis commands. Client and link faults work (the
// link proxies run in the harness, in front of the published addresses);
// a node fault returns ErrNotOurs. Close stops the link proxies and leaves
// the deployment as it is.
//
// On the Sentinel topology every address in target.Addresses that is not a
// Sentinel or the resource is a Redis node of the group (the master and its
// replicas), so that health can be judged as on deadbolt's own clusters.
func Attach(target endpoints.Endpoints, linkFaults bool) (*Cluster, error) {
	if err := target.Check(); err != nil {
		return nil, err
	}
	spec := Spec{Topology: target.Topology, Resource: target.Resource != "", LinkFaults: linkFaults}
	c := &Cluster{Run: newRunID(), target: &target, ports: map[int]bool{}}
	if linkFaults {
		c.links = linkproxy.New()
	}
	// A deployment with TLS says so with its CA (tls_ca); Check has read it.
	tlsCfg, _ := target.TLSConfig()
	c.dialer.SetTLS(tlsCfg)
	names := AttachedNames(target)
	for _, logical := range slices.Sorted(maps.Keys(target.Addresses)) {
		_, port, err := net.SplitHostPort(logical)
		if err != nil {
			return nil, fmt.Errorf("bad target: address %q is not host:port", logical)
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			return nil, fmt.Errorf("bad target: address %q has no numeric port", logical)
		}
		role := RoleRedis
		switch {
		case slices.Contains(target.Sentinels, logical):
			role = RoleSentinel
		case logical == target.Resource:
			role = RoleResource
		case target.Topology == Independent && !slices.Contains(target.Masters, logical):
			continue // not one of the masters the locks use
		}
		n := &Node{Name: names[logical], Role: role, Port: p, addr: target.Addresses[logical], cl: c}
		c.dialer.Set(logical, n.Addr())
		c.Nodes = append(c.Nodes, n)
		switch role {
		case RoleRedis:
			spec.Masters++
		case RoleSentinel:
			spec.Sentinels++
		}
	}
	if spec.Topology == Sentinel {
		spec.Replicas, spec.Masters = spec.Masters-1, 1
	}
	c.Spec = spec
	return c, nil
}

// AttachedNames are the names Attach gives the target's nodes, by logical
// address: a node is named by its host, as on deadbolt's own clusters,
// unless several share one host (ports apart).
func AttachedNames(target endpoints.Endpoints) map[string]string {
	hosts := map[string]int{}
	for l := range target.Addresses {
		host, _, _ := net.SplitHostPort(l)
		hosts[host]++
	}
	names := map[string]string{}
	for l := range target.Addresses {
		host, _, _ := net.SplitHostPort(l)
		names[l] = host
		if hosts[host] > 1 {
			names[l] = l
		}
	}
	return names
}

// ErrNotOurs is a node fault asked of a deployment deadbolt did not start.
var ErrNotOurs = errors.New("deadbolt did not start this node (--target): node faults need deadbolt's own containers")

// Attached reports a cluster over an existing deployment (Attach).
func (c *Cluster) Attached() bool { return c.target != nil }

// GroupName is the Sentinel master group's name: MasterName, or the
// target's for an attached cluster.
func (c *Cluster) GroupName() string { return c.masterName() }

// masterName is the Sentinel master group's name.
func (c *Cluster) masterName() string {
	if c.target != nil {
		return c.target.MasterName
	}
	return MasterName
}

// container is the node's container, or ErrNotOurs, once a kill's
// teardown is over: whatever is done to the container next sees it
// stopped.
func (n *Node) container() error {
	if n.c == nil {
		return fmt.Errorf("%s: %w", n.Name, ErrNotOurs)
	}
	return n.settle()
}

// closeAttached stops what the harness runs in front of an existing
// deployment, and nothing else.
func (c *Cluster) closeAttached(context.Context) error {
	if c.links != nil {
		c.links.Close()
	}
	return nil
}
