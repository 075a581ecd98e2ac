// Package nemesistest is an in-memory Redis deployment for Docker-free
// tests of faults, schedules and workloads, deadbolt's own and those a
// module outside deadbolt registers (it implements nemesis.Cluster): one master and its replicas (the sentinel
// topology) or independent masters, each node a miniredis server on
// 127.0.0.1 that real clients reach and real lock commands (SET NX PX, Lua
// scripts) run on. Nodes can be killed, paused, isolated and failed over.
// Replication is asynchronous: a replica has the master's writes only as
// of the last Sync, so a failover can promote a replica that lacks a
// granted lock, the classic lock loss. Replicas refuse writes. A
// Sentinel-like endpoint names the master and announces +switch-master,
// so clients that discover the master through Sentinel follow a failover;
// with Options.LinkFaults each client slot reaches each node through its
// own toxiproxy proxy. A fault the fake cannot stage (CLIENT KILL, a
// Redis Cluster's slots, breaking its Sentinel) fails with an error.
package nemesistest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/deadbolt-lab/deadbolt/internal/linkproxy"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/topology"
)

// Options shape a fake cluster.
type Options struct {
	// Topology is topology.Sentinel (the default: a master failed over to
	// its Replicas) or topology.Independent (Masters masters that neither
	// replicate nor fail over).
	Topology string
	Masters  int
	Replicas int
	// Resource adds a standalone node for the workload's data, never faulted.
	Resource bool
	// LinkFaults puts a proxy between each client slot and each node, so
	// that Link can delay or cut one client's view of one node.
	LinkFaults bool
	// ClockFaults lets SetClock move a node's clock; without it SetClock
	// fails, as on containers started without clockshift.
	ClockFaults bool
	// DownAfter is how long the master must stay unreachable before a
	// replica is promoted, as Sentinel's down-after-milliseconds: meanwhile
	// an isolated master still grants locks. Zero promotes at once.
	DownAfter time.Duration
}

// Cluster is a master and its replicas, with a Sentinel-like failover:
// when the master stops being reachable to its peers (killed, paused or
// isolated) a reachable replica is promoted at once, and the old master
// rejoins as a replica of it, losing what it never replicated. On the
// independent topology every node is a master of its own.
type Cluster struct {
	opts     Options
	resource *Node
	links    *linkproxy.Set // nil without Options.LinkFaults
	sentinel *sentinel

	mu     sync.Mutex
	closed bool
	nodes  []*Node
	master *Node
	// Failovers lists each promotion, "old -> new".
	failovers []string
}

var _ nemesis.Cluster = (*Cluster)(nil)

// Start starts a master (redis-1) and replicas (redis-2, ...) that allow
// clock faults, closed when t ends.
func Start(t testing.TB, replicas int) *Cluster {
	t.Helper()
	return StartWith(t, Options{Replicas: replicas, ClockFaults: true})
}

// StartWith starts a fake cluster shaped by o, closed when t ends.
func StartWith(t testing.TB, o Options) *Cluster {
	t.Helper()
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// New starts the nodes o asks for; Close stops them.
func New(o Options) (*Cluster, error) {
	if o.Topology == "" {
		o.Topology = topology.Sentinel
	}
	size := o.Replicas + 1
	switch o.Topology {
	case topology.Sentinel:
	case topology.Independent:
		size = max(o.Masters, 1)
	default:
		return nil, fmt.Errorf("the fake cluster has no %s topology", o.Topology)
	}
	c := &Cluster{opts: o}
	for i := range size {
		n, err := newNode(c, fmt.Sprintf("redis-%d", i+1), topology.RoleRedis)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.nodes = append(c.nodes, n)
	}
	c.master = c.nodes[0]
	for _, n := range c.nodes {
		n.setMaster(n == c.master || !c.failsOver())
	}
	if o.Resource {
		n, err := newNode(c, topology.ResourceName, topology.RoleResource)
		if err != nil {
			c.Close()
			return nil, err
		}
		n.setMaster(true)
		c.resource = n
	}
	if o.LinkFaults {
		c.links = linkproxy.New()
	}
	if o.Topology == topology.Sentinel {
		s, err := startSentinel(c)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.sentinel = s
	}
	return c, nil
}

// failsOver reports whether the cluster promotes a replica when its master
// is lost: the sentinel topology does, independent masters do not.
func (c *Cluster) failsOver() bool { return c.opts.Topology == topology.Sentinel }

// Close stops every node.
func (c *Cluster) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	if c.sentinel != nil {
		c.sentinel.close()
	}
	if c.links != nil {
		c.links.Close()
	}
	for _, n := range c.nodes {
		n.close()
	}
	if c.resource != nil {
		c.resource.close()
	}
}

// Sync replicates the master's data to every replica its peers reach:
// each then holds exactly the master's keys, with their TTLs.
func (c *Cluster) Sync() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.syncLocked()
}

func (c *Cluster) syncLocked() error {
	if !c.failsOver() {
		return nil // independent masters replicate nothing
	}
	if !c.master.reachable() {
		return fmt.Errorf("master %s does not answer its replicas", c.master.name)
	}
	src := c.master.server()
	for _, n := range c.nodes {
		if n == c.master || !n.reachable() {
			continue
		}
		if dst := n.server(); dst != nil {
			if err := copyData(src, dst); err != nil {
				return fmt.Errorf("%s -> %s: %w", c.master.name, n.name, err)
			}
		}
	}
	return nil
}

// Failover promotes a reachable replica, as Sentinel would: the one with
// the lowest name.
func (c *Cluster) Failover() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failoverLocked()
}

func (c *Cluster) failoverLocked() error {
	for _, n := range c.nodes {
		if n != c.master && n.reachable() {
			old := c.master
			c.failovers = append(c.failovers, old.name+" -> "+n.name)
			c.master = n
			n.setMaster(true)
			// An old master its peers reach is told at once and turns
			// replica; one cut off goes on taking writes until it rejoins.
			old.setMaster(!old.reachable())
			if c.sentinel != nil {
				c.sentinel.switched(old, n)
			}
			return nil
		}
	}
	return errors.New("no reachable replica to promote")
}

// Failovers lists the promotions so far, "old -> new".
func (c *Cluster) Failovers() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.failovers...)
}

// unreachable fails the master over when it is n and stays unreachable
// for Options.DownAfter.
func (c *Cluster) unreachable(n *Node) {
	if !c.failsOver() {
		return
	}
	judge := func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.closed && c.master == n && !n.reachable() {
			_ = c.failoverLocked() // none reachable: the master stays, as with no Sentinel majority
		}
	}
	if c.opts.DownAfter == 0 {
		judge()
		return
	}
	time.AfterFunc(c.opts.DownAfter, judge)
}

// rejoined makes a node that is back a replica of the master again:
// it takes the master's data, losing its own writes since.
func (c *Cluster) rejoined(n *Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failsOver() && n != c.master {
		n.setMaster(false) // told of the new master, it turns replica
	}
	if c.failsOver() && n != c.master && n.reachable() && c.master.reachable() {
		if src, dst := c.master.server(), n.server(); src != nil && dst != nil {
			_ = copyData(src, dst) // the next Sync tries again
		}
	}
}

func (c *Cluster) Master(ctx context.Context) (nemesis.Node, error) {
	if !c.failsOver() {
		return nil, fmt.Errorf("topology %s has no single master", c.opts.Topology)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.master, nil
}

func (c *Cluster) Replicas(ctx context.Context) ([]nemesis.Node, error) {
	if _, err := c.Master(ctx); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []nemesis.Node
	for _, n := range c.nodes {
		if n != c.master {
			out = append(out, n)
		}
	}
	return out, nil
}

func (c *Cluster) Masters(ctx context.Context) ([]nemesis.Node, error) {
	m, err := c.Master(ctx)
	if err != nil {
		return nil, err
	}
	return []nemesis.Node{m}, nil
}

// ByRole lists the nodes of a role: the Redis nodes, the resource node, the Sentinel.
func (c *Cluster) ByRole(r topology.Role) []nemesis.Node {
	var out []nemesis.Node
	switch {
	case r == topology.RoleRedis:
		for _, n := range c.nodes {
			out = append(out, n)
		}
	case r == topology.RoleResource && c.resource != nil:
		out = append(out, c.resource)
	case r == topology.RoleSentinel && c.sentinel != nil:
		out = append(out, sentinelNode{c.sentinel})
	}
	return out
}

func (c *Cluster) Node(name string) (nemesis.Node, error) {
	if c.resource != nil && name == c.resource.name {
		return c.resource, nil
	}
	if s := (sentinelNode{c.sentinel}); c.sentinel != nil && name == s.Name() {
		return s, nil
	}
	return c.redisNode(name)
}

func (c *Cluster) redisNode(name string) (*Node, error) {
	for _, n := range c.nodes {
		if n.name == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no node %q", name)
}

// Nodes are the Redis nodes, master first at the start.
func (c *Cluster) Nodes() []*Node { return c.nodes }

func (c *Cluster) GroupName() string { return topology.MasterName }

// Topology, HealthTimeout and FailoverWithin are those of the topology the
// fake stands for.
func (c *Cluster) Topology() string             { return c.opts.Topology }
func (c *Cluster) HealthTimeout() time.Duration { return topology.HealthTimeout(c.opts.Topology) }

// FailoverWithin counts from the fake's DownAfter, at least 100 ms: the
// fake fails over after DownAfter, and a short one keeps the wait for a
// failover that never comes short.
func (c *Cluster) FailoverWithin() time.Duration {
	return topology.FailoverWithin(c.opts.Topology, max(c.opts.DownAfter, 100*time.Millisecond))
}

// WaitHealthy waits until every node answers its peers, then replicates
// the master to them: a healthy deployment's replicas have caught up.
func (c *Cluster) WaitHealthy(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		err := c.healthy()
		if err == nil {
			return c.Sync()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not healthy after %v: %w", timeout, err)
		case <-t.C:
		}
	}
}

func (c *Cluster) healthy() error {
	for _, n := range c.nodes {
		if !n.reachable() {
			return fmt.Errorf("%s %w", n.name, errDown)
		}
	}
	return nil
}

func (c *Cluster) PrimarySlot() (int, error) {
	return 0, errors.New("the fake cluster is no Redis Cluster")
}

func (c *Cluster) MigrateSlot(context.Context, int, nemesis.Node, nemesis.Node, time.Duration) error {
	return errors.New("the fake cluster is no Redis Cluster")
}
