package linkproxy

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// A link's faults hit only the slot and node it joins: a delay holds the
// replies back, a cut lets nothing through, a heal restores it, and the
// other slot's link to the same node is untouched throughout.
func TestLinkFaultsHitOneSlotsViewOfOneNode(t *testing.T) {
	node := miniredis.RunT(t)
	s := New()
	defer s.Close()
	ctx := context.Background()
	client := func(slot int) *redis.Client {
		addr, err := s.Listen(slot, "redis-1", node.Addr())
		require.NoError(t, err)
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: 300 * time.Millisecond, PoolSize: 1})
		t.Cleanup(func() { c.Close() })
		return c
	}
	c0, c1 := client(0), client(1)
	require.NoError(t, c0.Ping(ctx).Err())
	require.NoError(t, c1.Ping(ctx).Err())

	l0, err := s.Link(0, "redis-1", node.Addr())
	require.NoError(t, err)
	require.Empty(t, l0.Faults())
	require.NoError(t, l0.Delay(100*time.Millisecond))
	require.Equal(t, []string{"delay"}, l0.Faults())
	start := time.Now()
	require.NoError(t, c0.Ping(ctx).Err())
	require.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond, "the reply was held back")
	l0.Heal(ctx)

	require.NoError(t, l0.Cut())
	require.Equal(t, []string{"cut-down", "cut-up"}, l0.Faults())
	require.Error(t, c0.Ping(ctx).Err(), "nothing goes through a cut link")
	require.NoError(t, c1.Ping(ctx).Err(), "the other slot's link is untouched")
	l0.Heal(ctx)
	require.Empty(t, l0.Faults())
	require.Eventually(t, func() bool { return c0.Ping(ctx).Err() == nil }, 10*time.Second, 20*time.Millisecond, "healed")

	s.Close()
	_, err = s.Listen(2, "redis-1", node.Addr())
	require.ErrorContains(t, err, "closed")
}
