package cluster_test

import (
	"bufio"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/endpoints"
)

// Every node deadbolt starts asks for a password; the lock user's rights
// are the locks' and no more; and the Sentinels and replicas, on their own
// users, still fail over: after a failover no node has refused them
// anything.
func TestEveryNodeAsksForAPasswordAndLockUsersGetNoMoreThanLocksNeed(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Sentinel, Resource: true})
	ctx := context.Background()

	// A connection without credentials is refused on every node.
	for _, n := range c.Nodes {
		require.Equal(t, "-NOAUTH Authentication required.", rawCommand(t, n.Addr(), "PING"), n.Name)
	}

	e := c.Endpoints()
	require.Equal(t, cluster.LockUser, e.Username)
	require.Equal(t, cluster.LockUser, e.SentinelUsername)
	require.NotEmpty(t, e.Password)
	_, admin := c.Admin()
	require.NotEqual(t, admin, e.Password, "lock users never get the harness's password")

	// A library that can send only a password gets the lock user's rights
	// as the default user, and no more.
	for _, n := range c.ByRole(cluster.RoleRedis) {
		plain := redis.NewClient(&redis.Options{Addr: n.Addr(), Password: e.Password})
		require.NoError(t, plain.Ping(ctx).Err(), n.Name)
		require.ErrorContains(t, plain.Do(ctx, "CONFIG", "SET", "maxmemory", "1").Err(), "NOPERM", n.Name)
		plain.Close()
		wrong := redis.NewClient(&redis.Options{Addr: n.Addr(), Password: "wrong"})
		require.ErrorContains(t, wrong.Ping(ctx).Err(), "WRONGPASS", n.Name)
		wrong.Close()
		admin := n.Client() // these refusals were the test's own
		require.NoError(t, admin.Do(ctx, "ACL", "LOG", "RESET").Err())
		admin.Close()
	}

	// The lock user takes and frees locks on the master, through Sentinel.
	clients, err := e.Clients(endpoints.DefaultClientOptions())
	require.NoError(t, err)
	rdb := clients[0]
	defer rdb.Close()
	require.NoError(t, rdb.SetNX(ctx, "k", "me", time.Minute).Err())
	require.NoError(t, rdb.Del(ctx, "k").Err())
	// Every data and scripting command is its own, whatever a library
	// keeps its lock in, on any channel: a fair lock's queue, a sorted set
	// of waiters, a counter in a hash, its own pub/sub channel.
	for _, cmd := range [][]any{
		{"LPUSH", "q", "a"}, {"ZADD", "z", "1", "a"}, {"HINCRBY", "h", "f", "1"}, {"SCAN", "0"},
		{"SADD", "s", "a"}, {"XADD", "x", "*", "f", "v"}, {"PUBLISH", "redisson_lock__channel:{k}", "0"},
		{"FCALL_RO", "nope", "0"},
	} {
		err := rdb.Do(ctx, cmd...).Err()
		if err != nil {
			require.NotContains(t, err.Error(), "NOPERM", "%v", cmd)
		}
	}
	require.NoError(t, rdb.Del(ctx, "q", "z", "h", "s", "x").Err())
	// It may not administer, erase or list every key.
	for _, cmd := range [][]any{
		{"CONFIG", "SET", "maxmemory", "1"}, {"FLUSHALL"}, {"KEYS", "*"},
		{"REPLICAOF", "NO", "ONE"}, {"CLIENT", "KILL", "TYPE", "normal"}, {"SHUTDOWN", "NOSAVE"},
	} {
		require.ErrorContains(t, rdb.Do(ctx, cmd...).Err(), "NOPERM", "%v", cmd)
	}
	// Those refusals are in the master's ACL LOG, where a run reads them.
	refused, err := c.LockRefusals(ctx)
	require.NoError(t, err)
	require.Contains(t, strings.Join(refused, "\n"), "refused user "+cluster.LockUser+"'s command flushall")
	// Redis 7 refuses DEBUG to everyone before it looks at ACLs (its
	// enable-debug-command is off); ACL DRYRUN shows the lock user's own.
	m, err := c.Master(ctx)
	require.NoError(t, err)
	ma := m.Client()
	defer ma.Close()
	dry, err := ma.Do(ctx, "ACL", "DRYRUN", cluster.LockUser, "DEBUG", "SLEEP", "0").Text()
	require.NoError(t, err)
	require.Contains(t, dry, "no permissions to run the 'debug' command")
	res, err := e.ResourceClient(endpoints.DefaultClientOptions())
	require.NoError(t, err)
	defer res.Close()
	require.NoError(t, res.Set(ctx, "counter:k", 1, 0).Err())
	require.ErrorContains(t, res.FlushAll(ctx).Err(), "NOPERM")
	// On a Sentinel it may ask for the master, not fail one over.
	d := e.Dialer()
	s := redis.NewSentinelClient(&redis.Options{Addr: e.Sentinels[0], Dialer: d.Dial, Username: e.SentinelUsername, Password: e.SentinelPassword})
	defer s.Close()
	require.NoError(t, s.GetMasterAddrByName(ctx, cluster.MasterName).Err())
	require.ErrorContains(t, s.Failover(ctx, cluster.MasterName).Err(), "NOPERM")

	// The harness fails the master over; Sentinels and replicas do the
	// rest on their own users.
	failOver(t, c)
	for _, n := range c.Nodes {
		admin := n.Client()
		entries, err := admin.ACLLog(ctx, 0).Result()
		admin.Close()
		require.NoError(t, err, n.Name)
		for _, entry := range entries {
			require.Equal(t, cluster.LockUser, entry.Username, "%s refused %+v", n.Name, *entry)
		}
	}
}

// rawCommand sends one inline command on a fresh connection, without
// credentials, and returns the reply's first line.
func rawCommand(t *testing.T, addr, cmd string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	_, err = conn.Write([]byte(cmd + "\r\n"))
	require.NoError(t, err)
	line, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err)
	return strings.TrimRight(line, "\r\n")
}
