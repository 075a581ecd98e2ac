package cluster_test

import (
	"bufio"
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
)

// A paused node answers nothing but keeps its connections: a PING sent on a
// connection opened before the pause gets no reply while the node is
// paused, and its reply arrives on that same connection after Heal.
func TestPausedNodeHangsAndKeepsItsConnections(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	ctx := context.Background()
	n := c.ByRole(cluster.RoleRedis)[0]
	conn, err := net.Dial("tcp", n.Addr())
	require.NoError(t, err)
	defer conn.Close()
	r := bufio.NewReader(conn)
	user, pass := c.Admin()
	_, err = conn.Write([]byte("AUTH " + user + " " + pass + "\r\n"))
	require.NoError(t, err)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "+OK\r\n", line)
	ping := func() {
		_, err := conn.Write([]byte("PING\r\n"))
		require.NoError(t, err)
	}
	ping()
	line, err = r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "+PONG\r\n", line)

	require.NoError(t, n.Pause(ctx))
	require.ErrorContains(t, n.Ping(ctx), "does not answer PING")
	ping()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(time.Second)))
	_, err = r.ReadString('\n')
	var ne net.Error
	require.ErrorAs(t, err, &ne, "a paused node answered or closed the connection")
	require.True(t, ne.Timeout())

	require.NoError(t, c.HealAll(ctx))
	require.NoError(t, n.Ping(ctx))
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	line, err = r.ReadString('\n')
	require.NoError(t, err, "the connection opened before the pause is gone")
	require.Equal(t, "+PONG\r\n", line, "the PING sent during the pause is answered after it")
}
