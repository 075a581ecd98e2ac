package cluster_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/endpoints"
)

// With TLS every node of the Sentinel topology (and the resource) answers
// only TLS: a plaintext client, go-redis or redis-cli, gets no reply. The
// lock user reaches the master through the Sentinels over TLS, checking
// each node's certificate against the run's CA, and a client that trusts
// another CA is refused. Sentinel and replication run over TLS too: the
// cluster is healthy, and a failover completes.
func TestTLSNodesAnswerOnlyTLSAndStillFailOver(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Sentinel, Resource: true, TLS: true})
	ctx := context.Background()
	e := c.Endpoints()
	require.Contains(t, e.TLSCA, "BEGIN CERTIFICATE")

	for _, n := range c.Nodes {
		plain := redis.NewClient(&redis.Options{Addr: n.Addr(), Username: e.Username, Password: e.Password,
			MaxRetries: -1, DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second})
		require.Error(t, plain.Ping(ctx).Err(), "%s answered plaintext", n.Name)
		plain.Close()
	}

	clients, err := e.Clients(endpoints.DefaultClientOptions())
	require.NoError(t, err)
	rdb := clients[0]
	defer rdb.Close()
	// WAIT on the write's own connection: the key is on both replicas,
	// whichever Sentinel promotes.
	_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.SetNX(ctx, "k", "me", time.Minute)
		p.Do(ctx, "WAIT", 2, 5000)
		return nil
	})
	require.NoError(t, err)
	res, err := e.ResourceClient(endpoints.DefaultClientOptions())
	require.NoError(t, err)
	defer res.Close()
	require.NoError(t, res.Set(ctx, "counter:k", 1, 0).Err())

	// redis-cli, as an operator would: refused without --tls, served with it.
	if cli, err := exec.LookPath("redis-cli"); err == nil {
		ca := filepath.Join(t.TempDir(), "ca.crt")
		require.NoError(t, os.WriteFile(ca, []byte(e.TLSCA), 0o600))
		port := strconv.Itoa(c.ByRole(cluster.RoleRedis)[0].HostPort)
		args := []string{"-h", "127.0.0.1", "-p", port, "--user", e.Username, "--pass", e.Password, "--no-auth-warning"}
		out, _ := exec.Command(cli, append(args, "PING")...).CombinedOutput()
		require.NotContains(t, string(out), "PONG", "redis-cli without --tls")
		out, err = exec.Command(cli, append(args, "--tls", "--cacert", ca, "PING")...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "PONG")
	}

	other := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1, TLS: true})
	wrong := e
	wrong.TLSCA = other.Endpoints().TLSCA
	bad, err := wrong.ResourceClient(endpoints.DefaultClientOptions())
	require.NoError(t, err)
	defer bad.Close()
	require.ErrorContains(t, bad.Ping(ctx).Err(), "certificate signed by unknown authority")
	other.Close(ctx)

	failOver(t, c)
	require.Equal(t, "me", rdb.Get(ctx, "k").Val(), "the promoted replica had the key by TLS replication")
}

// failOver has the harness ask a Sentinel for a failover and waits until
// the cluster is healthy around a new master.
func failOver(t testing.TB, c *cluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	old, err := c.Master(ctx)
	require.NoError(t, err)
	sentinel := c.ByRole(cluster.RoleSentinel)[0].Client()
	defer sentinel.Close()
	require.NoError(t, sentinel.Do(ctx, "SENTINEL", "FAILOVER", cluster.MasterName).Err())
	require.Eventually(t, func() bool {
		m, err := c.Master(ctx)
		return err == nil && m.Name != old.Name
	}, time.Minute, 100*time.Millisecond, "Sentinel never promoted a replica")
	require.NoError(t, c.WaitHealthy(ctx, time.Minute))
}

// A Redis Cluster with TLS forms over a TLS cluster bus, and a lock user's
// cluster client follows the slot map (names each node's certificate
// carries) to every master over TLS.
func TestTLSRedisClusterFormsAndServes(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.RedisCluster, TLS: true})
	ctx := context.Background()
	n := c.ByRole(cluster.RoleRedis)[0]
	plain := redis.NewClient(&redis.Options{Addr: n.Addr(), MaxRetries: -1, DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second})
	require.Error(t, plain.Ping(ctx).Err())
	plain.Close()
	clients, err := c.Endpoints().Clients(endpoints.DefaultClientOptions())
	require.NoError(t, err)
	defer clients[0].Close()
	for i := range 20 { // keys on every master
		require.NoError(t, clients[0].Set(ctx, "k"+strconv.Itoa(i), i, time.Minute).Err())
	}
}
