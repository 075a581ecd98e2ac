package scenarios

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/endpoints"
)

// A scenario's steps name deadbolt's own nodes (delay-bsm cuts client 0's
// link to redis-1). Against a target, redis-N of independent masters is
// the target's N-th master; a name no target node has is refused before
// anything starts, never left to strike nothing.
func TestRetargetPutsTheTargetsNodesInTheSteps(t *testing.T) {
	s, err := Get("delay-bsm")
	require.NoError(t, err)
	require.Equal(t, "link:0:redis-1", s.Fault.Steps[0].Target)

	independent := endpoints.Endpoints{Topology: cluster.Independent,
		Masters:   []string{"db-b.internal:6379", "db-a.internal:6379"},
		Addresses: map[string]string{"db-a.internal:6379": "127.0.0.1:1", "db-b.internal:6379": "127.0.0.1:2"}}
	got := s
	require.NoError(t, got.retarget(independent))
	require.Equal(t, "link:0:db-b.internal", got.Fault.Steps[0].Target, "redis-1 is the first master the locks use")
	require.Equal(t, "link:0:redis-1", s.Fault.Steps[0].Target, "the scenario's own steps are left as they were")

	sentinel := endpoints.Endpoints{Topology: cluster.Sentinel, MasterName: "mymaster",
		Sentinels: []string{"s1:26379"},
		Addresses: map[string]string{"s1:26379": "127.0.0.1:3", "r1:6379": "127.0.0.1:4", "r2:6379": "127.0.0.1:5"}}
	got = s
	err = got.retarget(sentinel)
	require.ErrorContains(t, err, "names node redis-1")
	require.ErrorContains(t, err, "r1, r2, s1")

	// A node the target has keeps its name; roles need no renaming.
	got = s
	got.Fault.Steps = append(got.Fault.Steps[:0:0], got.Fault.Steps...)
	got.Fault.Steps[0].Target = "link:*:r2"
	require.NoError(t, got.retarget(sentinel))
	require.Equal(t, "link:*:r2", got.Fault.Steps[0].Target)
	got.Fault.Steps[0].Target = "primary"
	require.NoError(t, got.retarget(sentinel))
	require.Equal(t, "primary", got.Fault.Steps[0].Target)
	got.Fault.Steps[0].Target = "link:0:primary"
	require.NoError(t, got.retarget(sentinel), "a link by role fits any deployment's names")
	require.Equal(t, "link:0:primary", got.Fault.Steps[0].Target)
}
