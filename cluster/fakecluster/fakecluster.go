// Package fakecluster is an in-memory stand-in for a Sentinel-managed
// Redis group, for Docker-free tests of the harness core: one miniredis
// per node, so locks meet real Redis command and script semantics, and
// nodes that can be paused, killed, isolated and failed over. Replication
// is asynchronous as Redis's is: a replica has the master's writes only
// after Sync, so a failover can promote a replica that lacks the last
// grants (the lock loss Sentinel-backed locks suffer).
package fakecluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/endpoints"
)

// Cluster is a master and its replicas, each a miniredis.
type Cluster struct {
	mu     sync.Mutex
	nodes  []*Node
	master *Node
	// resource holds the data the lock protects, outside the lock
	// service; no fault touches it.
	resource *miniredis.Miniredis
}

// Node is one in-memory Redis server and its fault state.
type Node struct {
	// Info is how the harness names the node.
	Info     *cluster.Node
	srv      *miniredis.Miniredis
	paused   bool
	down     bool
	isolated bool
}

// New starts a master (redis-1), replicas redis-2 ... redis-(1+replicas)
// and a resource node.
func New(replicas int) (*Cluster, error) {
	c := &Cluster{}
	for i := range replicas + 2 {
		srv := miniredis.NewMiniRedis()
		srv.ClockTTL(true) // keys expire as real time passes
		if err := srv.Start(); err != nil {
			c.Close()
			return nil, err
		}
		if i == replicas+1 {
			c.resource = srv
			break
		}
		c.nodes = append(c.nodes, &Node{Info: &cluster.Node{Name: fmt.Sprintf("redis-%d", i+1), Role: cluster.RoleRedis}, srv: srv})
	}
	c.master = c.nodes[0]
	return c, nil
}

// Close stops every node.
func (c *Cluster) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes {
		if n.paused {
			n.srv.Unlock()
			n.paused = false
		}
		n.srv.Close()
	}
	if c.resource != nil {
		c.resource.Close()
	}
}

// Addr is where clients reach the named node.
func (c *Cluster) Addr(name string) (string, error) {
	n, err := c.node(name)
	if err != nil {
		return "", err
	}
	return n.srv.Addr(), nil
}

func (c *Cluster) node(name string) (*Node, error) {
	for _, n := range c.nodes {
		if n.Info.Name == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no node %q in the fake cluster", name)
}

// act runs f on the named node under the cluster's lock.
func (c *Cluster) act(name string, f func(*Node) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.node(name)
	if err != nil {
		return err
	}
	return f(n)
}

// Pause freezes the node: its connections stay open and nothing answers,
// as under docker pause.
func (c *Cluster) Pause(name string) error {
	return c.act(name, func(n *Node) error {
		if !n.paused {
			n.srv.Lock() // every command takes the server's lock
			n.paused = true
		}
		return nil
	})
}

// Resume thaws a paused node.
func (c *Cluster) Resume(name string) error {
	return c.act(name, func(n *Node) error {
		if n.paused {
			n.paused = false
			n.srv.Unlock()
		}
		return nil
	})
}

// Kill stops the node; without persistence it forgets every key.
func (c *Cluster) Kill(name string) error {
	return c.act(name, func(n *Node) error {
		if n.paused {
			n.paused = false
			n.srv.Unlock()
		}
		if !n.down {
			n.srv.Close()
			n.srv.FlushAll()
			n.down = true
		}
		return nil
	})
}

// Start brings a killed node back, empty, on its old address.
func (c *Cluster) Start(name string) error {
	return c.act(name, func(n *Node) error {
		if !n.down {
			return nil
		}
		if err := n.srv.Restart(); err != nil {
			return err
		}
		n.down = false
		return nil
	})
}

// Isolate cuts the node off from the other nodes (no replication, no
// part in a failover) while clients still reach it; Reconnect undoes it.
func (c *Cluster) Isolate(name string) error {
	return c.act(name, func(n *Node) error { n.isolated = true; return nil })
}

// Reconnect ends an isolation.
func (c *Cluster) Reconnect(name string) error {
	return c.act(name, func(n *Node) error { n.isolated = false; return nil })
}

// Sync replicates the master's keys (strings and hashes, with their TTLs)
// to every replica the master reaches: until it runs, the replicas lack
// the master's recent writes.
func (c *Cluster) Sync() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.master
	if !m.up() || m.isolated {
		return fmt.Errorf("the master %s cannot replicate now", m.Info.Name)
	}
	for _, r := range c.nodes {
		if r == m || !r.up() || r.isolated {
			continue
		}
		if err := copyKeys(m.srv, r.srv); err != nil {
			return err
		}
	}
	return nil
}

func (n *Node) up() bool { return !n.down && !n.paused }

// copyKeys makes dst hold what src holds.
func copyKeys(src, dst *miniredis.Miniredis) error {
	dst.FlushAll()
	for _, k := range src.Keys() {
		switch src.Type(k) {
		case "string":
			v, err := src.Get(k)
			if err != nil {
				return err
			}
			if err := dst.Set(k, v); err != nil {
				return err
			}
		case "hash":
			fields, err := src.HKeys(k)
			if err != nil {
				return err
			}
			for _, f := range fields {
				dst.HSet(k, f, src.HGet(k, f))
			}
		default:
			return fmt.Errorf("the fake cluster replicates strings and hashes, not %s %q", src.Type(k), k)
		}
		if ttl := src.TTL(k); ttl > 0 {
			dst.SetTTL(k, ttl)
		}
	}
	return nil
}

// Failover promotes a replica that is up and not isolated (the named one,
// or else the first), without a Sync first: writes the old master took
// since the last Sync are lost. The old master becomes a replica.
func (c *Cluster) Failover(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes {
		if n != c.master && n.up() && !n.isolated && (name == "" || n.Info.Name == name) {
			c.master = n
			return nil
		}
	}
	return errors.New("no replica can be promoted")
}

// Setup describes the fake as a Sentinel topology of one master.
func (c *Cluster) Setup() cluster.Spec {
	return cluster.Spec{Topology: cluster.Sentinel, Masters: 1, Replicas: len(c.nodes) - 1}.Defaults()
}

// Node is the named node's description.
func (c *Cluster) Node(name string) (*cluster.Node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.node(name)
	if err != nil {
		return nil, err
	}
	return n.Info, nil
}

// ByRole is every node in role r (all of them are Redis nodes).
func (c *Cluster) ByRole(r cluster.Role) []*cluster.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*cluster.Node
	for _, n := range c.nodes {
		if n.Info.Role == r {
			out = append(out, n.Info)
		}
	}
	return out
}

// Master is the node that is master now.
func (c *Cluster) Master(context.Context) (*cluster.Node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.master.Info, nil
}

// Replicas are the other nodes.
func (c *Cluster) Replicas(context.Context) ([]*cluster.Node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*cluster.Node
	for _, n := range c.nodes {
		if n != c.master {
			out = append(out, n.Info)
		}
	}
	return out, nil
}

// GroupName is the Sentinel group's name.
func (c *Cluster) GroupName() string { return "deadbolt" }

// Masters is the one master (the fake is no Redis Cluster).
func (c *Cluster) Masters(ctx context.Context) ([]*cluster.Node, error) {
	m, err := c.Master(ctx)
	return []*cluster.Node{m}, err
}

var errNoRedisCluster = errors.New("the fake cluster is no Redis Cluster")

// PrimarySlot fails: the fake has no slots.
func (c *Cluster) PrimarySlot() (int, error) { return 0, errNoRedisCluster }

// MigrateSlot fails: the fake has no slots.
func (c *Cluster) MigrateSlot(context.Context, int, *cluster.Node, *cluster.Node, time.Duration) error {
	return errNoRedisCluster
}

// Link fails: the fake has no proxies between clients and nodes.
func (c *Cluster) Link(int, string) (*cluster.Link, error) {
	return nil, errors.New("the fake cluster has no client links")
}

// WaitHealthy waits until every node is up, reachable and not isolated,
// or timeout passes.
func (c *Cluster) WaitHealthy(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		c.mu.Lock()
		sick := slices.IndexFunc(c.nodes, func(n *Node) bool { return !n.up() || n.isolated })
		var name string
		if sick >= 0 {
			name = c.nodes[sick].Info.Name
		}
		c.mu.Unlock()
		if sick < 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s is not healthy: %w", name, ctx.Err())
		case <-t.C:
		}
	}
}

// MasterEndpoints reach the current master alone, as one independent
// master group (a Sentinel client would follow the master; a lock built
// on these stays with the node that was master when it was built).
func (c *Cluster) MasterEndpoints() endpoints.Endpoints {
	c.mu.Lock()
	defer c.mu.Unlock()
	logical, resource := c.master.Info.Name+":6379", cluster.ResourceName+":6379"
	return endpoints.Endpoints{
		Topology:  endpoints.Independent,
		Masters:   []string{logical},
		Resource:  resource,
		Addresses: map[string]string{logical: c.master.srv.Addr(), resource: c.resource.Addr()},
	}
}
