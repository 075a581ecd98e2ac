package scenarios_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// A client that asks Sentinel for the master only when it dials (as
// redis-py does) stays on the isolated old master while Sentinel promotes
// a replica, and meets the new master only when the old one is demoted,
// after the fault healed. The default failover-simple must still catch it:
// the workload runs through the heal and convergence, where the damage is.
func TestFailoverCatchesAClientThatFollowsOnlyOnReconnect(t *testing.T) {
	clustertest.RequireDocker(t)
	s, err := scenarios.Get("failover-simple")
	require.NoError(t, err)
	s.LockOptions.Sentinel = client.SentinelReconnect
	res, err := s.Run(context.Background(), scenarios.RunOptions{Seed: 1, Store: t.TempDir(), Driver: clienttest.Command()})
	require.NoError(t, err)
	require.Equal(t, "invalid", res.Verdict, res.Reason)
	require.Len(t, res.FaultWindows, 1)
	healed := res.FaultWindows[0].End
	late := 0
	for _, a := range res.Anomalies {
		if a.Kind == checker.KindDoubleHold && a.At >= healed {
			late++
		}
	}
	require.Positive(t, late, "double holds once the isolation healed, when the old master was demoted: %s", res.Reason)
	var phases []string
	for _, p := range res.Phases {
		phases = append(phases, string(p.Phase))
	}
	require.Equal(t, []string{"faults", "heal", "convergence", "settle", "end"}, phases)
}
