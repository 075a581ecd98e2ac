package locks_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/locks"
)

func TestFencedTokens(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	ctx := context.Background()

	t.Run("refusal consumes no token", func(t *testing.T) {
		a := clustertest.NewLock(t, "fenced", c, locks.Options{TTL: 10 * time.Second})
		b := clustertest.NewLock(t, "fenced", c, locks.Options{TTL: 10 * time.Second})
		first, err := a.Acquire(ctx, "refused")
		require.NoError(t, err)
		require.Equal(t, int64(1), first.Fence, "the first grant of a fresh key draws token 1")
		for i := 0; i < 3; i++ {
			_, err = b.Acquire(ctx, "refused")
			require.ErrorIs(t, err, locks.ErrNotAcquired)
		}
		require.NoError(t, a.Release(ctx, first))
		second, err := b.Acquire(ctx, "refused")
		require.NoError(t, err)
		require.Equal(t, first.Fence+1, second.Fence, "three refusals in between must not have drawn tokens")
		require.NoError(t, b.Release(ctx, second))
	})

	t.Run("tokens increase across expiry handoffs", func(t *testing.T) {
		ttl := 300 * time.Millisecond
		clients := []locks.Lock{
			clustertest.NewLock(t, "fenced", c, locks.Options{TTL: ttl}),
			clustertest.NewLock(t, "fenced", c, locks.Options{TTL: ttl}),
			clustertest.NewLock(t, "fenced", c, locks.Options{TTL: ttl}),
		}
		var last int64
		for round := 0; round < 6; round++ {
			l := clients[round%len(clients)]
			lease, err := l.Acquire(ctx, "handoff")
			require.NoError(t, err, "round %d: the previous holder's lease must have expired", round)
			require.Greater(t, lease.Fence, last, "round %d", round)
			last = lease.Fence
			// Never released: the next round takes over after expiry.
			time.Sleep(ttl + 50*time.Millisecond)
			require.ErrorIs(t, l.Release(ctx, lease), locks.ErrNotHeld)
		}
	})

	t.Run("tokens follow grant order under contention", func(t *testing.T) {
		var mu sync.Mutex
		var fences []int64
		var wg sync.WaitGroup
		for w := 0; w < 5; w++ {
			wg.Add(1)
			l := clustertest.NewLock(t, "fenced", c, locks.Options{TTL: 10 * time.Second, Retries: 50, RetryDelay: 5 * time.Millisecond})
			go func() {
				defer wg.Done()
				for i := 0; i < 20; i++ {
					lease, err := l.Acquire(ctx, "contended")
					if err != nil {
						assert.True(t, locks.Failed(err), "unexpected error: %v", err)
						continue
					}
					// Inside the hold: the order of appends is the grant order.
					mu.Lock()
					fences = append(fences, lease.Fence)
					mu.Unlock()
					assert.NoError(t, l.Release(ctx, lease))
				}
			}()
		}
		wg.Wait()
		require.Greater(t, len(fences), 20, "contention made no progress")
		for i := 1; i < len(fences); i++ {
			require.Greater(t, fences[i], fences[i-1], "grant %d: fencing tokens must strictly increase", i)
		}
	})
}
