package cluster

import (
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
	require.NoError(t, spec.Validate())
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
