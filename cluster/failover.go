package cluster

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/topology"
)

// FailoverWithin is how long after a master falls silent the topology's own
// failover machinery has had two tries to replace it
// (topology.FailoverWithin), with the default down-after or node timeout
// when the spec sets none.
func (s Spec) FailoverWithin() time.Duration {
	s = s.Defaults()
	return topology.FailoverWithin(s.Topology, s.DownAfter)
}
