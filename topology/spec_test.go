package topology

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A spec without a down-after waits for the failover of the default one,
// not of none.
func TestFailoverWithinUsesTheDefaultDownAfter(t *testing.T) {
	require.Equal(t, FailoverWithin(Sentinel, time.Second), Spec{Topology: Sentinel}.FailoverWithin())
	require.Equal(t, FailoverWithin(Cluster, 2*time.Second), Spec{Topology: Cluster}.FailoverWithin())
	require.Zero(t, Spec{Topology: Independent}.FailoverWithin(), "independent masters have no failover")
}

func TestBadReplicationSettingsAreRejected(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Topology: Sentinel, Replication: Replication{MinReplicasToWrite: -1}}, "min-replicas-to-write must be 0 (off) or more, got -1"},
		{Spec{Topology: Sentinel, Replication: Replication{MinReplicasToWrite: 1, MinReplicasMaxLag: -2}}, "min-replicas-max-lag must be 1 s or more, got -2"},
		{Spec{Topology: Sentinel, Replication: Replication{MinReplicasMaxLag: 1}}, "min-replicas-max-lag 1 without min-replicas-to-write"},
		{Spec{Topology: Sentinel, Replicas: 2, Replication: Replication{MinReplicasToWrite: 3}}, "min-replicas-to-write 3, and each master has 2 replica(s): every write would be refused"},
		{Spec{Topology: Independent, Masters: 1, Replication: Replication{MinReplicasToWrite: 1}}, "each master has 0 replica(s)"},
		{Spec{Topology: Sentinel, Replication: Replication{ReplDisklessSync: "maybe"}}, `repl-diskless-sync must be yes or no, got "maybe"`},
	} {
		require.ErrorContains(t, c.spec.Validate(), c.want, "%+v", c.spec.Replication)
	}
	require.NoError(t, Spec{Topology: Sentinel, Replication: Replication{MinReplicasToWrite: 2, MinReplicasMaxLag: 1}}.Validate())
}

// scenario.json records the settings under their redis.conf names, and
// only the ones set.
func TestReplicationIsRecordedInTheSpecJSON(t *testing.T) {
	b, err := json.Marshal(Spec{Topology: Sentinel, Replication: Replication{MinReplicasToWrite: 1, MinReplicasMaxLag: 1}})
	require.NoError(t, err)
	require.Contains(t, string(b), `"min_replicas_to_write":1,"min_replicas_max_lag":1`)
	require.NotContains(t, string(b), "repl_diskless_sync")
	b, err = json.Marshal(Spec{Topology: Sentinel})
	require.NoError(t, err)
	require.NotContains(t, string(b), "min_replicas")
	var back Spec
	require.NoError(t, json.Unmarshal([]byte(`{"Topology":"sentinel","min_replicas_to_write":1,"min_replicas_max_lag":1}`), &back))
	require.Equal(t, Replication{MinReplicasToWrite: 1, MinReplicasMaxLag: 1}, back.Replication)
}
