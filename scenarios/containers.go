package scenarios

import (
	"context"
	"fmt"
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/topology"
)

// onContainers is the deployment of the containers deadbolt starts or
// attaches to: the run adapts them to what the nemesis declares it needs
// here, where it assembles both, so that the nemesis never imports Docker.
type onContainers struct{ c *cluster.Cluster }

// onContainer is one container node as the nemesis strikes it.
type onContainer struct{ *cluster.Node }

var (
	_ deployment   = onContainers{}
	_ nemesis.Node = onContainer{}
	_ nemesis.Link = (*cluster.Link)(nil)
)

func (d onContainers) Endpoints() endpoints.Endpoints { return d.c.Endpoints() }
func (d onContainers) EndpointsFor(slot int) (endpoints.Endpoints, error) {
	return d.c.EndpointsFor(slot)
}

func (d onContainers) Master(ctx context.Context) (nemesis.Node, error) {
	return asNode(d.c.Master(ctx))
}
func (d onContainers) Replicas(ctx context.Context) ([]nemesis.Node, error) {
	return asNodes(d.c.Replicas(ctx))
}
func (d onContainers) Masters(ctx context.Context) ([]nemesis.Node, error) {
	return asNodes(d.c.Masters(ctx))
}
func (d onContainers) ByRole(r topology.Role) []nemesis.Node {
	ns, _ := asNodes(d.c.ByRole(r), nil)
	return ns
}
func (d onContainers) Node(name string) (nemesis.Node, error) { return asNode(d.c.Node(name)) }
func (d onContainers) Link(slot int, node string) (nemesis.Link, error) {
	l, err := d.c.Link(slot, node)
	if err != nil {
		return nil, err // not a nil *cluster.Link in a non-nil Link
	}
	return l, nil
}
func (d onContainers) GroupName() string { return d.c.GroupName() }
func (d onContainers) WaitHealthy(ctx context.Context, timeout time.Duration) error {
	return d.c.WaitHealthy(ctx, timeout)
}
func (d onContainers) Topology() string              { return d.c.Spec.Topology }
func (d onContainers) HealthTimeout() time.Duration  { return d.c.Spec.HealthTimeout() }
func (d onContainers) FailoverWithin() time.Duration { return d.c.Spec.FailoverWithin() }
func (d onContainers) PrimarySlot() (int, error)     { return d.c.PrimarySlot() }
func (d onContainers) MigrateSlot(ctx context.Context, slot int, src, dst nemesis.Node, pause time.Duration) error {
	s, sok := src.(onContainer)
	t, tok := dst.(onContainer)
	if !sok || !tok {
		return fmt.Errorf("migrate-slot moves between the cluster's own nodes, not %s and %s", src.Name(), dst.Name())
	}
	return d.c.MigrateSlot(ctx, slot, s.Node, t.Node, pause)
}

func (n onContainer) Name() string        { return n.Node.Name }
func (n onContainer) Role() topology.Role { return n.Node.Role }

// Do sends the command on a patient connection of its own, closed after.
func (n onContainer) Do(ctx context.Context, args ...any) (any, error) {
	rdb := n.PatientClient()
	defer rdb.Close()
	return rdb.Do(ctx, args...).Result()
}

func asNode(n *cluster.Node, err error) (nemesis.Node, error) {
	if err != nil {
		return nil, err
	}
	return onContainer{n}, nil
}

func asNodes(ns []*cluster.Node, err error) ([]nemesis.Node, error) {
	if err != nil {
		return nil, err
	}
	out := make([]nemesis.Node, len(ns))
	for i, n := range ns {
		out[i] = onContainer{n}
	}
	return out, nil
}
