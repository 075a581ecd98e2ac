package nemesis

import (
	"context"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// holdsKey reads SCAN's reply as Node.Do hands it back (a go-redis reply
// here): a key with the characters MATCH reads as a pattern is found by
// its own name, not by the keys the pattern would match.
func TestHoldsKeyFindsTheKeyByItsOwnName(t *testing.T) {
	srv := miniredis.RunT(t)
	n := onRedis{name: "redis-1", rdb: redis.NewClient(&redis.Options{Addr: srv.Addr()})}
	t.Cleanup(func() { n.rdb.Close() })
	ctx := context.Background()
	require.NoError(t, n.rdb.Set(ctx, "lock-a", 1, 0).Err())
	require.NoError(t, n.rdb.Set(ctx, "lock-[ab]*", 1, 0).Err())

	require.NoError(t, holdsKey(ctx, n, "lock-[ab]*"))
	require.NoError(t, holdsKey(ctx, n, "lock-a"))
	require.ErrorContains(t, holdsKey(ctx, n, "lock-b"), "redis-1 does not hold lock-b")
	require.ErrorContains(t, holdsKey(ctx, nil, "lock-a"), "no master was known")
}

// onRedis is a node that only answers commands, from one go-redis client.
type onRedis struct {
	Node
	name string
	rdb  *redis.Client
}

func (n onRedis) Name() string { return n.name }
func (n onRedis) Do(ctx context.Context, args ...any) (any, error) {
	return n.rdb.Do(ctx, args...).Result()
}
