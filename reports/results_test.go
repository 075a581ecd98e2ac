package reports

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A mixed fleet's report says which processes ran which lock: its
// anomalies name processes.
func TestLockTextNamesTheMixedProcesses(t *testing.T) {
	require.Equal(t, "simple", LockText(&Results{Lock: "simple"}))
	r := &Results{Lock: "redsync@v4.0.4", Mix: "redsync@v4.0.3:1", MixedProcesses: map[int]string{4: "redsync@v4.0.3", 0: "redsync@v4.0.3"}}
	require.Equal(t, "redsync@v4.0.4 beside redsync@v4.0.3:1 (lock:clients, the last client slots): process 0 ran redsync@v4.0.3, process 4 ran redsync@v4.0.3", LockText(r))
}

func TestServerText(t *testing.T) {
	valkey := Server{Name: "valkey-8.1", Image: "deadbolt/valkey:8.1", Product: "valkey", Version: "8.1.1", RedisVersion: "7.2.4"}
	require.Equal(t, "valkey-8.1 (valkey 8.1.1, redis_version 7.2.4)", valkey.String())
	require.Equal(t, " --server valkey-8.1", valkey.Flag())
	redis := Server{Name: "redis-7.0", Image: "deadbolt/redis:7.0", Product: "redis", Version: "7.0.15", RedisVersion: "7.0.15"}
	require.Equal(t, "redis-7.0 (redis 7.0.15)", redis.String())
	require.Equal(t, "", redis.Flag(), "the default server needs no flag")
	require.Equal(t, "redis:7.4", Server{Image: "redis:7.4"}.String())
	require.Equal(t, "redis 7.2.0", Server{Product: "redis", Version: "7.2.0"}.String(), "a --target's: no name, no image")
	require.Equal(t, "", Server{}.String())
}
