package workloads

import "github.com/deadbolt-lab/deadbolt/topology"

// Duration is a length of time in a spec, written "1.5s"
// (topology.Duration: one duration type for a run's whole spec).
type Duration = topology.Duration
