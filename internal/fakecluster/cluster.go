// Package fakecluster is an in-memory Redis deployment for Docker-free
// tests of the harness: one master and its replicas, each node a miniredis
// server on 127.0.0.1 that real clients reach and real lock commands (SET
// NX PX, Lua scripts) run on. Nodes can be killed, paused, isolated and
// failed over. Replication is asynchronous: a replica has the master's
// writes only as of the last Sync, so a failover can promote a replica
// that lacks a granted lock, the classic lock loss.
package fakecluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// Cluster is a master and its replicas, with a Sentinel-like failover:
// when the master stops being reachable to its peers (killed, paused or
// isolated) a reachable replica is promoted at once, and the old master
// rejoins as a replica of it, losing what it never replicated.
type Cluster struct {
	mu     sync.Mutex
	nodes  []*Node
	master *Node
	// Failovers lists each promotion, "old -> new".
	failovers []string
}

var _ nemesis.Cluster = (*Cluster)(nil)

// Start starts a master (redis-1) and replicas (redis-2, ...), closed when
// t ends.
func Start(t testing.TB, replicas int) *Cluster {
	t.Helper()
	c, err := New(replicas)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// New starts a master and replicas; Close stops them.
func New(replicas int) (*Cluster, error) {
	c := &Cluster{}
	for i := range replicas + 1 {
		n, err := newNode(c, fmt.Sprintf("redis-%d", i+1))
		if err != nil {
			c.Close()
			return nil, err
		}
		c.nodes = append(c.nodes, n)
	}
	c.master = c.nodes[0]
	return c, nil
}

// Close stops every node.
func (c *Cluster) Close() {
	for _, n := range c.nodes {
		n.close()
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
			c.failovers = append(c.failovers, c.master.name+" -> "+n.name)
			c.master = n
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

// unreachable fails the master over when it is n.
func (c *Cluster) unreachable(n *Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.master == n {
		_ = c.failoverLocked() // none reachable: the master stays, as with no Sentinel majority
	}
}

// rejoined makes a node that is back a replica of the master again:
// it takes the master's data, losing its own writes since.
func (c *Cluster) rejoined(n *Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n != c.master && n.reachable() && c.master.reachable() {
		if src, dst := c.master.server(), n.server(); src != nil && dst != nil {
			_ = copyData(src, dst) // the next Sync tries again
		}
	}
}

func (c *Cluster) Master(ctx context.Context) (nemesis.Node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.master, nil
}

func (c *Cluster) Replicas(ctx context.Context) ([]nemesis.Node, error) {
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
	return []nemesis.Node{m}, err
}

func (c *Cluster) ByRole(r cluster.Role) []nemesis.Node {
	if r != cluster.RoleRedis {
		return nil
	}
	var out []nemesis.Node
	for _, n := range c.nodes {
		out = append(out, n)
	}
	return out
}

func (c *Cluster) Node(name string) (nemesis.Node, error) {
	for _, n := range c.nodes {
		if n.name == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no node %q", name)
}

// Nodes are the Redis nodes, master first at the start.
func (c *Cluster) Nodes() []*Node { return c.nodes }

// Link fails: clients reach the fake's nodes directly, through no proxy.
func (c *Cluster) Link(slot int, node string) (nemesis.Link, error) {
	return nil, errors.New("the fake cluster has no proxied links")
}

func (c *Cluster) GroupName() string { return cluster.MasterName }

// Spec is a Sentinel topology of the fake's size.
func (c *Cluster) Spec() cluster.Spec {
	return cluster.Spec{Topology: cluster.Sentinel, Masters: 1, Replicas: len(c.nodes) - 1, Sentinels: 3, Quorum: 2, DownAfter: time.Second}.Defaults()
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
			return fmt.Errorf("%w: %w", err, ctx.Err())
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
