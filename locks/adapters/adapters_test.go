package adapters_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
	_ "github.com/deadbolt-lab/deadbolt/locks/adapters"
)

// adapterCases are the adapters under test with the masters each runs on:
// redsync with one pool (single instance) and with three (Redlock).
var adapterCases = []struct {
	name    string
	masters int
}{
	{"redsync", 1},
	{"redsync", 3},
	{"bsm", 1},
}

// TestAdapters runs every check on every case, sharing one cluster per
// master count.
func TestAdapters(t *testing.T) {
	clusters := map[int]*cluster.Cluster{}
	for _, ac := range adapterCases {
		if clusters[ac.masters] == nil {
			clusters[ac.masters] = clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: ac.masters})
		}
	}
	for _, check := range []struct {
		name string
		f    func(t *testing.T, name string, c *cluster.Cluster)
	}{
		{"mutual exclusion under contention", mutualExclusionUnderContention},
		{"non-owner release is refused", nonOwnerReleaseIsRefused},
		{"expired holder's release is refused", expiredHolderReleaseIsRefused},
	} {
		t.Run(check.name, func(t *testing.T) {
			for _, ac := range adapterCases {
				t.Run(fmt.Sprintf("%s/%d-masters", ac.name, ac.masters), func(t *testing.T) {
					check.f(t, ac.name, clusters[ac.masters])
				})
			}
		})
	}
}

func mutualExclusionUnderContention(t *testing.T, name string, c *cluster.Cluster) {
	o := locks.Options{TTL: 10 * time.Second, Retries: 3, RetryDelay: 5 * time.Millisecond}
	_, acquired := clustertest.Contend(t, c, name, o, 40)
	require.Greater(t, acquired, int64(6), "contention test made no progress")
}

func nonOwnerReleaseIsRefused(t *testing.T, name string, c *cluster.Cluster) {
	ctx := context.Background()
	l := clustertest.NewLock(t, name, c, locks.Options{TTL: 10 * time.Second})
	other := clustertest.NewLock(t, name, c, locks.Options{TTL: 10 * time.Second})
	lease, err := l.Acquire(ctx, "k")
	require.NoError(t, err)
	require.NotEmpty(t, lease.Token)
	forged := *lease
	forged.Token = "someone-else"
	require.ErrorIs(t, l.Release(ctx, &forged), locks.ErrNotHeld)
	require.ErrorIs(t, other.Release(ctx, &forged), locks.ErrNotHeld)
	_, err = other.Acquire(ctx, "k")
	require.ErrorIs(t, err, locks.ErrNotAcquired, "a refused release must leave the lock held")
	require.NoError(t, l.Release(ctx, lease))
	again, err := other.Acquire(ctx, "k")
	require.NoError(t, err)
	require.NoError(t, other.Release(ctx, again))
}

// An expired holder's release reaches Redis through the library and is
// refused there, while the next holder keeps the lock.
func expiredHolderReleaseIsRefused(t *testing.T, name string, c *cluster.Cluster) {
	ctx := context.Background()
	// redsync bounds each node's call at TTL x 0.05: at 400 ms that was
	// 20 ms, which a loaded 2-core machine missed on a new connection.
	ttl := time.Second
	a := clustertest.NewLock(t, name, c, locks.Options{TTL: ttl})
	b := clustertest.NewLock(t, name, c, locks.Options{TTL: 10 * time.Second})
	start := time.Now()
	first, err := a.Acquire(ctx, "k")
	require.NoError(t, err)
	require.True(t, first.Deadline.After(start) && first.Deadline.Before(start.Add(ttl)),
		"validity deadline %v must lie within the TTL minus drift", first.Deadline.Sub(start))
	time.Sleep(ttl + 100*time.Millisecond)
	second, err := b.Acquire(ctx, "k")
	require.NoError(t, err, "the lease must expire after its TTL")
	require.ErrorIs(t, a.Release(ctx, first), locks.ErrNotHeld)
	_, err = a.Acquire(ctx, "k")
	require.ErrorIs(t, err, locks.ErrNotAcquired, "the late release must not free the next holder's lock")
	require.NoError(t, b.Release(ctx, second))
}

func TestAdapterRetriesWaitForTheHolder(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	ctx := context.Background()
	for _, name := range []string{"redsync", "bsm"} {
		t.Run(name, func(t *testing.T) {
			// A 1 s lease: redsync's per-node timeout is 5% of it (50 ms).
			holder := clustertest.NewLock(t, name, c, locks.Options{TTL: time.Second})
			_, err := holder.Acquire(ctx, name)
			require.NoError(t, err)
			// 100 tries, each up to 50 ms apart (25 ms on average), outlast the 1 s lease.
			waiter := clustertest.NewLock(t, name, c, locks.Options{TTL: 10 * time.Second, Retries: 100, RetryDelay: 50 * time.Millisecond})
			lease, err := waiter.Acquire(ctx, name)
			require.NoError(t, err)
			require.NoError(t, waiter.Release(ctx, lease))
			noRetry := clustertest.NewLock(t, name, c, locks.Options{TTL: 10 * time.Second})
			_, err = noRetry.Acquire(ctx, name+"-held")
			require.NoError(t, err)
			_, err = noRetry.Acquire(ctx, name+"-held")
			require.ErrorIs(t, err, locks.ErrNotAcquired)
		})
	}
}

func TestBsmNeedsOneMasterGroup(t *testing.T) {
	_, err := locks.New("bsm", endpoints.Unreachable(2), locks.Options{})
	require.ErrorContains(t, err, "runs on one master group")
	_, err = locks.New("redsync", endpoints.Unreachable(0), locks.Options{})
	require.ErrorContains(t, err, "at least one master")
}

// A redsync release that deleted our key on some masters but fewer than a
// quorum (the others' copies gone) took effect there: it is a release of
// unknown effect, never one that certainly did nothing (ErrNotHeld), or
// the judge would hold the lease as still held while the key is free.
func TestRedsyncReleaseOnFewerThanAQuorumMayHaveTakenEffect(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 3})
	ctx := context.Background()
	a := clustertest.NewLock(t, "redsync", c, locks.Options{TTL: 10 * time.Second})
	l, err := a.Acquire(ctx, "k")
	require.NoError(t, err)
	masters := c.Clients(endpoints.ClientOptions{})
	require.Len(t, masters, 3)
	for _, m := range masters[1:] {
		require.NoError(t, m.Del(ctx, "k").Err(), "the lease's copies on two masters are gone, as if expired")
	}
	err = a.Release(ctx, l)
	require.Error(t, err, "redsync released on one master of three")
	require.NotErrorIs(t, err, locks.ErrNotHeld)
	require.False(t, locks.Failed(err), "a release that deleted a copy may have freed the lock: its effect is unknown")
	n, err := masters[0].Exists(ctx, "k").Result()
	require.NoError(t, err)
	require.Zero(t, n, "the release deleted the copy it found")
}
