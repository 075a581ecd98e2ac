package nemesis

import (
	"context"
	"time"

	"github.com/deadbolt-lab/deadbolt/topology"
)

// Node is one node the faults break and heal.
type Node interface {
	Name() string
	Role() topology.Role
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
	// Do sends one command (a fault's own, or a check's) on a new
	// connection to the node and returns its reply as RESP decodes it
	// (strings, integers, arrays as []any). The connection is patient
	// (seconds, not a probe's half second), and ctx bounds it too: a fault
	// whose command timed out cannot tell whether it struck.
	Do(ctx context.Context, args ...any) (any, error)
}
