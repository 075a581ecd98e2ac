package endpoints_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/endpoints"
)

// A logical address is dialled at its published port, and the connection
// says it is the logical one: go-redis compares RemoteAddr with the master
// Sentinel announces.
func TestDialerReachesTheLogicalAddressAtItsPublishedPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	e := endpoints.Endpoints{Topology: endpoints.Independent, Masters: []string{"redis-2:6379"},
		Addresses: map[string]string{"redis-2:6379": ln.Addr().String()}}
	conn, err := e.Dialer().Dial(context.Background(), "tcp", "redis-2:6379")
	require.NoError(t, err)
	defer conn.Close()
	require.Equal(t, "redis-2:6379", conn.RemoteAddr().String())
	require.Equal(t, "tcp", conn.RemoteAddr().Network())
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("the published port never saw the connection")
	}

	_, err = e.Dialer().Dial(context.Background(), "tcp", "redis-9:6379")
	require.ErrorContains(t, err, `no published port for node address "redis-9:6379"`)
}

func TestCheckRejectsEndpointsNoLockCouldUse(t *testing.T) {
	addrs := map[string]string{"redis-1:6379": "127.0.0.1:1", "sentinel-1:26379": "127.0.0.1:2"}
	for _, c := range []struct {
		e    endpoints.Endpoints
		want string
	}{
		{endpoints.Endpoints{Topology: "ring", Addresses: addrs}, `unknown topology "ring"`},
		{endpoints.Endpoints{Topology: endpoints.Cluster, Addresses: addrs}, "needs cluster_nodes"},
		{endpoints.Endpoints{Topology: endpoints.Cluster, ClusterNodes: []string{"redis-7:6379"}, Addresses: addrs}, "node redis-7:6379 has no entry"},
		{endpoints.Endpoints{Topology: endpoints.Independent, Addresses: addrs}, "needs masters"},
		{endpoints.Endpoints{Topology: endpoints.Sentinel, Sentinels: []string{"sentinel-1:26379"}, Addresses: addrs}, "master name"},
		{endpoints.Endpoints{Topology: endpoints.Independent, Masters: []string{"redis-2:6379"}, Addresses: addrs}, "node redis-2:6379 has no entry"},
		{endpoints.Endpoints{Topology: endpoints.Independent, Masters: []string{"redis-1:6379"}, Resource: "resource:6379", Addresses: addrs}, "node resource:6379 has no entry"},
	} {
		require.ErrorContains(t, c.e.Check(), c.want)
		_, err := c.e.Clients(endpoints.DefaultClientOptions())
		require.ErrorContains(t, err, c.want, "Clients checks first")
	}
	good := endpoints.Endpoints{Topology: endpoints.Sentinel, MasterName: "m", Sentinels: []string{"sentinel-1:26379"}, Addresses: addrs}
	require.NoError(t, good.Check())
	require.Equal(t, 1, good.Groups())
}

func TestUnreachableHasTheGroupsAsked(t *testing.T) {
	for n := range 4 {
		e := endpoints.Unreachable(n)
		require.Equal(t, n, e.Groups())
		if n > 0 {
			require.NoError(t, e.Check())
		}
	}
}

// go-redis cuts a read at its own timeout before the call's context: a
// lock whose call timeout is longer gets client timeouts as long.
func TestClientTimeoutsAreRaisedToTheCallTimeout(t *testing.T) {
	o := endpoints.ClientOptions{ReadTimeout: 100 * time.Millisecond}.WithDefaults(2 * time.Second)
	require.Equal(t, 100*time.Millisecond, o.ReadTimeout, "a timeout set stays")
	require.Equal(t, 2*time.Second, o.WriteTimeout)
	require.Equal(t, 2*time.Second, o.DialTimeout)
	require.Equal(t, endpoints.DefaultClientOptions().PoolSize, o.PoolSize)
	require.Equal(t, endpoints.DefaultClientOptions(), endpoints.ClientOptions{}.WithDefaults(0))
}

// Building a client does no I/O, not even a name lookup: go-redis resolves
// the host name in NewClient (up to 2 s) unless maintenance notifications
// are off, and locks.Fits builds locks over names no resolver knows.
func TestClientsAreBuiltWithoutNameLookups(t *testing.T) {
	e := endpoints.Unreachable(2)
	e.Resource = e.Masters[1]
	clients, err := e.Clients(endpoints.DefaultClientOptions())
	require.NoError(t, err)
	res, err := e.ResourceClient(endpoints.DefaultClientOptions())
	require.NoError(t, err)
	for _, u := range append(clients, res, e.Dialer().Client(e.Masters[0], endpoints.DefaultClientOptions())) {
		c := u.(*redis.Client)
		require.Equal(t, maintnotifications.ModeDisabled, c.Options().MaintNotificationsConfig.Mode, c.Options().Addr)
		require.NoError(t, c.Close())
	}
}

// Every client a lock opens dials once: go-redis's default of five dials
// with backoff turns a refused connection (nothing sent, a certain
// failure) into a timeout (an unknown outcome). The failover client
// passes it to its master and Sentinel connections alike.
func TestEveryClientDialsOnce(t *testing.T) {
	var clients []redis.UniversalClient
	for _, topology := range []string{endpoints.Independent, endpoints.Sentinel, endpoints.Cluster} {
		cs, err := endpoints.UnreachableOn(topology).Clients(endpoints.DefaultClientOptions())
		require.NoError(t, err)
		clients = append(clients, cs...)
	}
	o := endpoints.DefaultClientOptions()
	o.SentinelOnDial = true
	cs, err := endpoints.UnreachableOn(endpoints.Sentinel).Clients(o)
	require.NoError(t, err)
	clients = append(clients, cs...)
	for _, u := range clients {
		switch c := u.(type) {
		case *redis.Client:
			require.Equal(t, 1, c.Options().DialerRetries, c.String())
		case *redis.ClusterClient:
			require.Equal(t, 1, c.Options().DialerRetries)
		default:
			t.Fatalf("unexpected client %T", u)
		}
		require.NoError(t, u.Close())
	}
}
