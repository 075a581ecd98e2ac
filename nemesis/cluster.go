package nemesis

import (
	"context"
	"time"

	"github.com/deadbolt-lab/deadbolt/topology"
)

// Cluster is what the schedules and faults ask of the nodes under test, and
// all they ask: declared here so that a fault needs neither Docker nor a
// Redis client. The run that starts or attaches to containers adapts them
// (scenarios); nemesis/nemesistest is one in memory.
type Cluster interface {
	// Master is the node that takes the lock's writes now (on a Redis
	// Cluster, the master of the primary key's slot); Replicas are its
	// replicas and Masters every master.
	Master(ctx context.Context) (Node, error)
	Replicas(ctx context.Context) ([]Node, error)
	Masters(ctx context.Context) ([]Node, error)
	// ByRole lists the nodes of a role; Node finds one by name.
	ByRole(r topology.Role) []Node
	Node(name string) (Node, error)
	// Link is client slot's link to the named node, for link faults.
	Link(slot int, node string) (Link, error)
	// GroupName is the Sentinel master group.
	GroupName() string
	// WaitHealthy waits up to timeout for every node to answer and the
	// roles to agree.
	WaitHealthy(ctx context.Context, timeout time.Duration) error
	// Topology is what the cluster was started as (topology.Sentinel,
	// topology.Independent or topology.Cluster).
	Topology() string
	// HealthTimeout is how long a health check may take on it, and
	// FailoverWithin how long its own failover takes to have had two
	// tries (0 where nothing fails over).
	HealthTimeout() time.Duration
	FailoverWithin() time.Duration
	// PrimarySlot and MigrateSlot move the primary key's slot (Redis
	// Cluster only).
	PrimarySlot() (int, error)
	MigrateSlot(ctx context.Context, slot int, src, dst Node, pause time.Duration) error
}
