package scenarios

import (
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// deployment is what a run's phases drive: the nodes the nemesis strikes
// and the endpoints the clients reach. startCluster sets the containers
// (onContainers); a test sets an in-memory cluster (nemesis/nemesistest)
// to run the phases without Docker.
type deployment interface {
	nemesis.Cluster
	Endpoints() endpoints.Endpoints
	EndpointsFor(slot int) (endpoints.Endpoints, error)
}
