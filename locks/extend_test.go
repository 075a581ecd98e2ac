package locks_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/locks"
	_ "github.com/deadbolt-lab/deadbolt/locks/all"
)

// Every lock that offers extend extends only a lease whose key still holds
// its token: its own (the TTL is new again), never another's, never a key
// that is gone, whatever the lease it is handed says.
func TestExtendOnlyWhatIsStillHeld(t *testing.T) {
	ctx := context.Background()
	masters := map[int]*cluster.Cluster{}
	for _, name := range locks.Names() {
		if !offersExtend(name) {
			continue
		}
		n := 1
		if locks.Fits(name, 3) == nil {
			n = 3 // a quorum lock, on three masters
		}
		if masters[n] == nil {
			masters[n] = clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: n})
		}
		c := masters[n]
		t.Run(name, func(t *testing.T) {
			var nodes []*redis.Client
			for i := range n {
				nodes = append(nodes, nodeClient(t, c, i))
			}
			ttl := 20 * time.Second
			l := clustertest.NewLock(t, name, c, locks.Options{TTL: ttl})
			ext := l.(locks.Extender)
			key := "extend-" + name
			lease, err := l.Acquire(ctx, key)
			require.NoError(t, err)
			for _, rdb := range nodes {
				require.NoError(t, rdb.PExpire(ctx, key, 5*time.Second).Err())
			}
			require.NoError(t, ext.Extend(ctx, lease))
			for _, rdb := range nodes {
				require.Greater(t, rdb.PTTL(ctx, key).Val(), 15*time.Second, "the extend gave the key its TTL anew")
			}

			forged := *lease
			forged.Token = "someone-else"
			require.ErrorIs(t, ext.Extend(ctx, &forged), locks.ErrNotHeld, "another's token")

			for _, rdb := range nodes {
				require.NoError(t, rdb.Del(ctx, key).Err()) // as if it expired
			}
			require.ErrorIs(t, ext.Extend(ctx, lease), locks.ErrNotHeld, "a key that is gone")

			other := clustertest.NewLock(t, name, c, locks.Options{TTL: ttl})
			theirs, err := other.Acquire(ctx, key)
			require.NoError(t, err)
			require.ErrorIs(t, ext.Extend(ctx, lease), locks.ErrNotHeld, "a key another lease holds")
			require.NoError(t, other.Release(ctx, theirs))
		})
	}
}

func offersExtend(name string) bool {
	for _, c := range locks.Calls(name) {
		if c == locks.CallExtend {
			return true
		}
	}
	return false
}
