package nemesis

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/cluster"
)

// Cluster is what the schedules and faults ask of the nodes under test.
// OnDocker adapts the containers deadbolt starts or attaches to
// (*cluster.Cluster); nemesis/nemesistest is one in memory.
type Cluster interface {
	// Master is the node that takes the lock's writes now (on a Redis
	// Cluster, the master of the primary key's slot); Replicas are its
	// replicas and Masters every master.
	Master(ctx context.Context) (Node, error)
	Replicas(ctx context.Context) ([]Node, error)
	Masters(ctx context.Context) ([]Node, error)
	// ByRole lists the nodes of a role; Node finds one by name.
	ByRole(r cluster.Role) []Node
	Node(name string) (Node, error)
	// Link is client slot's link to the named node, for link faults.
	Link(slot int, node string) (Link, error)
	// GroupName is the Sentinel master group.
	GroupName() string
	// WaitHealthy waits up to timeout for every node to answer and the
	// roles to agree.
	WaitHealthy(ctx context.Context, timeout time.Duration) error
	// Spec is what the cluster was started as (its topology, how long a
	// health check and a failover may take).
	Spec() cluster.Spec
	// PrimarySlot and MigrateSlot move the primary key's slot (Redis
	// Cluster only).
	PrimarySlot() (int, error)
	MigrateSlot(ctx context.Context, slot int, src, dst Node, pause time.Duration) error
}

// Node is one node the faults break and heal.
type Node interface {
	Name() string
	Role() cluster.Role
	Kill(ctx context.Context) error
	Start(ctx context.Context) error
	// Heal starts or thaws a node a fault left down.
	Heal(ctx context.Context) error
	Pause(ctx context.Context) error
	Resume(ctx context.Context) error
	// Isolate cuts the node off from its peers, not from clients;
	// Reconnect undoes it.
	Isolate(ctx context.Context) error
	Reconnect(ctx context.Context) error
	// SetClock moves the node's wall clock by offset from true time.
	SetClock(ctx context.Context, offset time.Duration) error
	// Client and PatientClient are new connections to the node; the
	// patient one waits longer for a reply.
	Client() *redis.Client
	PatientClient() *redis.Client
}

// Link is a client's link to a node, which link faults delay or cut.
type Link interface {
	Delay(time.Duration) error
	Cut() error
	Heal(context.Context)
}

// OnDocker is the Cluster of c (nil when c is).
func OnDocker(c *cluster.Cluster) Cluster {
	if c == nil {
		return nil
	}
	return dockerCluster{c}
}

// dockerCluster adapts *cluster.Cluster to Cluster.
type dockerCluster struct{ c *cluster.Cluster }

// dockerNode adapts *cluster.Node to Node.
type dockerNode struct{ *cluster.Node }

func (n dockerNode) Name() string       { return n.Node.Name }
func (n dockerNode) Role() cluster.Role { return n.Node.Role }

func wrap(n *cluster.Node, err error) (Node, error) {
	if err != nil {
		return nil, err
	}
	return dockerNode{n}, nil
}

func wrapAll(ns []*cluster.Node, err error) ([]Node, error) {
	if err != nil {
		return nil, err
	}
	out := make([]Node, len(ns))
	for i, n := range ns {
		out[i] = dockerNode{n}
	}
	return out, nil
}

// unwrap is the container node behind n.
func unwrap(n Node) *cluster.Node {
	if d, ok := n.(dockerNode); ok {
		return d.Node
	}
	return nil
}

func (d dockerCluster) Master(ctx context.Context) (Node, error) { return wrap(d.c.Master(ctx)) }
func (d dockerCluster) Replicas(ctx context.Context) ([]Node, error) {
	return wrapAll(d.c.Replicas(ctx))
}
func (d dockerCluster) Masters(ctx context.Context) ([]Node, error) { return wrapAll(d.c.Masters(ctx)) }
func (d dockerCluster) ByRole(r cluster.Role) []Node {
	ns, _ := wrapAll(d.c.ByRole(r), nil)
	return ns
}
func (d dockerCluster) Node(name string) (Node, error) { return wrap(d.c.Node(name)) }
func (d dockerCluster) Link(slot int, node string) (Link, error) {
	l, err := d.c.Link(slot, node)
	if err != nil {
		return nil, err
	}
	return l, nil
}
func (d dockerCluster) GroupName() string  { return d.c.GroupName() }
func (d dockerCluster) Spec() cluster.Spec { return d.c.Spec }
func (d dockerCluster) WaitHealthy(ctx context.Context, timeout time.Duration) error {
	return d.c.WaitHealthy(ctx, timeout)
}
func (d dockerCluster) PrimarySlot() (int, error) { return d.c.PrimarySlot() }
func (d dockerCluster) MigrateSlot(ctx context.Context, slot int, src, dst Node, pause time.Duration) error {
	s, t := unwrap(src), unwrap(dst)
	if s == nil || t == nil {
		return fmt.Errorf("migrate-slot moves between the cluster's own nodes, not %s and %s", src.Name(), dst.Name())
	}
	return d.c.MigrateSlot(ctx, slot, s, t, pause)
}

var (
	_ Cluster = dockerCluster{}
	_ Node    = dockerNode{}
	_ Link    = (*cluster.Link)(nil)
)
