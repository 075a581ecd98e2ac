package nemesis_test

import (
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// The workload runner is the Clients a run hands the nemesis; nemesis
// cannot say so itself without importing it.
var _ nemesis.Clients = (*workloads.Runner)(nil)
