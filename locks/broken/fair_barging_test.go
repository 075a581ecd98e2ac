package broken_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// A free lock with a waiter in line: fair keeps it for the waiter and
// refuses a newcomer; fair-barging hands it to the newcomer. The waiter is
// put in line by hand, with a place that never lapses, so that nothing but
// the script decides.
func TestFairBargingPassesTheLineThatFairKeeps(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	rdb := c.Clients(endpoints.DefaultClientOptions())[0]
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	for name, barges := range map[string]bool{"fair": false, "fair-barging": true} {
		t.Run(name, func(t *testing.T) {
			key := "line:" + name
			require.NoError(t, rdb.RPush(ctx, locks.FairQueueKey(key), "waiter").Err())
			require.NoError(t, rdb.ZAdd(ctx, locks.FairTimeoutKey(key), redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: "waiter"}).Err())

			newcomer := clustertest.NewLock(t, name, c, locks.Options{TTL: long})
			lease, err := newcomer.Acquire(ctx, key)
			if !barges {
				require.ErrorIs(t, err, locks.ErrNotAcquired, "a free lock with a waiter in line is the waiter's")
				return
			}
			require.NoError(t, err, "the barging lock hands the free lock to whoever asks")
			require.Equal(t, []string{"waiter"}, rdb.LRange(ctx, locks.FairQueueKey(key), 0, -1).Val(), "the waiter it passed still stands in line")
			require.NoError(t, newcomer.Release(ctx, lease))
		})
	}
}
