package cluster

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// argValue is the last value given to a redis-server flag: later arguments
// win in Redis.
func argValue(args []string, flag string) (string, bool) {
	for j := len(args) - 2; j >= 0; j-- {
		if args[j] == flag {
			return args[j+1], true
		}
	}
	return "", false
}

func TestReplicationSettingsReachEveryLockServiceNode(t *testing.T) {
	spec := Spec{Topology: Sentinel, Persistence: PersistEverySec,
		Replication: Replication{MinReplicasToWrite: 1, MinReplicasMaxLag: 1, ReplDisklessSync: "no"}}.Defaults()
	require.NoError(t, spec.validate())
	args := (&Cluster{Spec: spec}).redisArgs("redis-2")
	for flag, want := range map[string]string{
		"--min-replicas-to-write": "1", "--min-replicas-max-lag": "1", "--repl-diskless-sync": "no",
		"--appendonly": "yes", "--appendfsync": "everysec", "--replica-announce-ip": "redis-2",
	} {
		got, ok := argValue(args, flag)
		require.True(t, ok, "%s missing from %v", flag, args)
		require.Equal(t, want, got, flag)
	}
}

func TestReplicationZeroValueIsTodaysNode(t *testing.T) {
	args := (&Cluster{Spec: Spec{Topology: Sentinel}.Defaults()}).redisArgs("redis-1")
	got, _ := argValue(args, "--repl-diskless-sync")
	require.Equal(t, "yes", got)
	_, ok := argValue(args, "--min-replicas-to-write")
	require.False(t, ok, "no write is held back unless asked: %v", args)
	// The resource node is never held back for replicas it does not have.
	require.NotContains(t, redisArgs(ResourceName), "--min-replicas-to-write")
}

func TestMinReplicasMaxLagDefaultsToRedisOwn(t *testing.T) {
	spec := Spec{Topology: Sentinel, Replication: Replication{MinReplicasToWrite: 2}}.Defaults()
	require.Equal(t, 10, spec.MinReplicasMaxLag, "recorded as it ran: Redis's default lag")
	got, _ := argValue((&Cluster{Spec: spec}).redisArgs("redis-1"), "--min-replicas-max-lag")
	require.Equal(t, "10", got)
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
