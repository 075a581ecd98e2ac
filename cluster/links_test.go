package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/endpoints"
)

// Link faults hit one client's view of one node: client 0's replies from
// redis-1 come late while client 1's do not, client 1's link to redis-2 is
// cut while client 0 still reaches it, and healing restores both.
func TestLinkFaultsHitOneClientAndOneNode(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 2, LinkFaults: true})
	ctx := context.Background()
	clients := map[int][]string{} // slot -> master addresses it dials
	open := func(slot int) (r1, r2 func(context.Context) error) {
		e, err := c.EndpointsFor(slot)
		require.NoError(t, err)
		require.NotEqual(t, c.Endpoints().Addresses["redis-1:6379"], e.Addresses["redis-1:6379"], "slot %d dials a proxy", slot)
		clients[slot] = []string{e.Addresses["redis-1:6379"], e.Addresses["redis-2:6379"]}
		o := endpoints.DefaultClientOptions()
		o.ReadTimeout = 3 * time.Second // longer than the delay: a late reply, not a timeout
		rdbs, err := e.Clients(o)
		require.NoError(t, err)
		t.Cleanup(func() {
			for _, r := range rdbs {
				r.Close()
			}
		})
		return func(ctx context.Context) error { return rdbs[0].Ping(ctx).Err() },
			func(ctx context.Context) error { return rdbs[1].Ping(ctx).Err() }
	}
	a1, a2 := open(0)
	b1, b2 := open(1)
	require.NotEqual(t, clients[0], clients[1], "each slot has its own links")
	timed := func(ping func(context.Context) error) (time.Duration, error) {
		ctx, cancel := context.WithTimeout(ctx, 2500*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := ping(ctx)
		return time.Since(start), err
	}

	// Connect first: a new connection's handshake would be delayed as well.
	for _, ping := range []func(context.Context) error{a1, a2, b1, b2} {
		_, err := timed(ping)
		require.NoError(t, err)
	}

	l01, err := c.Link(0, "redis-1")
	require.NoError(t, err)
	require.NoError(t, l01.Delay(700*time.Millisecond))
	require.Equal(t, []string{"delay"}, l01.Faults())
	d, err := timed(a1)
	require.NoError(t, err)
	require.GreaterOrEqual(t, d, 700*time.Millisecond, "client 0's reply from redis-1 was not delayed")
	d, err = timed(b1)
	require.NoError(t, err)
	require.Less(t, d, 700*time.Millisecond, "client 1's link to redis-1 was delayed too")

	l12, err := c.Link(1, "redis-2")
	require.NoError(t, err)
	require.NoError(t, l12.Cut())
	_, err = timed(b2)
	require.Error(t, err, "client 1 reached redis-2 through a cut link")
	_, err = timed(a2)
	require.NoError(t, err, "client 0's link to redis-2 was cut too")

	require.NoError(t, c.HealAll(ctx))
	require.Empty(t, l01.Faults())
	require.Empty(t, l12.Faults())
	for _, ping := range []func(context.Context) error{a1, b1, b2} {
		require.Eventually(t, func() bool {
			d, err := timed(ping)
			return err == nil && d < 700*time.Millisecond
		}, 10*time.Second, 50*time.Millisecond)
	}
}

func TestLinkFaultsNeedLinks(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	_, err := c.Link(0, "redis-1")
	require.ErrorContains(t, err, "without link faults")
	e, err := c.EndpointsFor(0)
	require.NoError(t, err)
	require.Equal(t, c.Endpoints(), e)
}
