package broken_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/locks/broken"
)

var errCrash = errors.New("client crashed")

const (
	short = 300 * time.Millisecond
	long  = 10 * time.Second
)

// env builds locks (each over its own connections, like separate
// processes) on one master, and reads that master directly.
type env struct {
	t   *testing.T
	c   *cluster.Cluster
	rdb redis.UniversalClient
}

// lock builds the lock under test: the broken variant, or simple (which has
// no window to stop in) to contrast it with when f is nil.
func (e env) lock(f locks.Factory, o locks.Options) locks.Lock {
	e.t.Helper()
	factory := locks.NewSimple
	if f != nil {
		factory = f
	}
	l, err := factory(e.c.Endpoints(), o)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { locks.Close(l) })
	return l
}

// pttl is the raw PTTL: -1 when the key never expires, -2 when absent.
func (e env) pttl(key string) int64 {
	e.t.Helper()
	n, err := e.rdb.Do(context.Background(), "pttl", key).Int64()
	require.NoError(e.t, err)
	return n
}

// Each probe plays the scenario that breaks one variant and reports
// whether the property it tests was broken; simple must never break it.
var probes = []struct {
	name    string
	factory locks.Factory
	probe   func(e env, f locks.Factory, key string) bool
}{
	{"setnx-expire", broken.NewSetnxExpire, crashWhileAcquiringLeavesNoExpiry},
	{"del-no-owner", broken.NewDelNoOwner, expiredHolderReleasesNextHolder},
	{"get-then-del", broken.NewGetThenDel, stallBetweenCheckAndDelete},
	{"no-ttl", broken.NewNoTTL, crashedHolderBlocksForever},
}

func TestBrokenVariantsBreakWhatSimpleKeeps(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	rdb := c.Clients(endpoints.DefaultClientOptions())[0]
	t.Cleanup(func() { rdb.Close() })
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			require.NoError(t, locks.Lookup(p.name), "registered under its own name")
			t.Run("broken", func(t *testing.T) {
				require.True(t, p.probe(env{t, c, rdb}, p.factory, p.name+":broken"), "%s must break its property", p.name)
			})
			t.Run("simple", func(t *testing.T) {
				require.False(t, p.probe(env{t, c, rdb}, nil, p.name+":simple"), "simple must keep the property %s breaks", p.name)
			})
		})
	}
}

// A client that dies between taking the lock and giving it its expiry:
// broken when the key is left without expiry and no one can take it after
// the TTL.
func crashWhileAcquiringLeavesNoExpiry(e env, f locks.Factory, key string) bool {
	ctx := context.Background()
	crash := func(context.Context, string, string) error { return errCrash }
	a := e.lock(f, locks.Options{TTL: short, At: crash})
	_, err := a.Acquire(ctx, key)
	if f != nil {
		require.ErrorIs(e.t, err, errCrash)
		require.False(e.t, locks.Failed(err), "a crash mid-acquire is an unknown outcome")
	} else {
		require.NoError(e.t, err) // simple has no window: it crashes holding
	}
	noExpiry := e.pttl(key) == -1
	time.Sleep(short + 100*time.Millisecond)
	b := e.lock(f, locks.Options{TTL: long})
	lease, err := b.Acquire(ctx, key)
	if err == nil {
		require.NoError(e.t, b.Release(ctx, lease))
	} else {
		require.ErrorIs(e.t, err, locks.ErrNotAcquired)
	}
	require.Equal(e.t, noExpiry, err != nil, "a key without expiry blocks the next client")
	return noExpiry
}

// A holder whose lease expired releases after the next client took the
// lock: broken when that release freed the next holder's lock, so that a
// third client gets in while the second still holds.
func expiredHolderReleasesNextHolder(e env, f locks.Factory, key string) bool {
	ctx := context.Background()
	a := e.lock(f, locks.Options{TTL: short})
	b := e.lock(f, locks.Options{TTL: long})
	c := e.lock(f, locks.Options{TTL: long})
	first, err := a.Acquire(ctx, key)
	require.NoError(e.t, err)
	time.Sleep(short + 100*time.Millisecond)
	second, err := b.Acquire(ctx, key)
	require.NoError(e.t, err, "the first lease expired")
	aErr := a.Release(ctx, first) // late: the lease is b's now
	return thirdGetsIn(e, c, b, second, key, aErr)
}

// A holder stalls between its owner check and its delete, its lease
// expires and another client takes the lock: broken when the delete then
// removes that client's lock.
func stallBetweenCheckAndDelete(e env, f locks.Factory, key string) bool {
	ctx := context.Background()
	inWindow, proceed := make(chan struct{}), make(chan struct{})
	stall := func(context.Context, string, string) error {
		close(inWindow)
		<-proceed
		return nil
	}
	a := e.lock(f, locks.Options{TTL: short, At: stall})
	b := e.lock(f, locks.Options{TTL: long})
	c := e.lock(f, locks.Options{TTL: long})
	first, err := a.Acquire(ctx, key)
	require.NoError(e.t, err)
	released := make(chan error, 1)
	if f != nil {
		go func() { released <- a.Release(ctx, first) }()
		<-inWindow // a saw its own token
	}
	time.Sleep(short + 100*time.Millisecond)
	second, err := b.Acquire(ctx, key)
	require.NoError(e.t, err, "the first lease expired")
	if f != nil {
		close(proceed)
	} else {
		// simple has no window: its stall ends where its release starts.
		go func() { released <- a.Release(ctx, first) }()
	}
	return thirdGetsIn(e, c, b, second, key, <-released)
}

// thirdGetsIn finishes the two release probes: a's late release answered
// aErr; it reports whether c got the lock while b's lease was valid.
func thirdGetsIn(e env, c, b locks.Lock, second *locks.Lease, key string, aErr error) bool {
	ctx := context.Background()
	third, err := c.Acquire(ctx, key)
	if err != nil {
		require.ErrorIs(e.t, err, locks.ErrNotAcquired)
		require.ErrorIs(e.t, aErr, locks.ErrNotHeld, "the late release must learn the lock was gone")
		require.NoError(e.t, b.Release(ctx, second))
		return false
	}
	require.NoError(e.t, aErr, "the late release believed it freed its own lock")
	require.True(e.t, time.Now().Before(second.Deadline), "b still held its lease")
	require.NoError(e.t, c.Release(ctx, third))
	return true
}

// A holder crashes and never releases: broken when the key never expires
// and blocks every later client.
func crashedHolderBlocksForever(e env, f locks.Factory, key string) bool {
	ctx := context.Background()
	a := e.lock(f, locks.Options{TTL: short})
	start := time.Now()
	lease, err := a.Acquire(ctx, key)
	require.NoError(e.t, err)
	if f != nil {
		require.WithinDuration(e.t, start.Add(broken.NoTTLValidity), lease.Deadline, time.Second)
	}
	noExpiry := e.pttl(key) == -1
	time.Sleep(short + 100*time.Millisecond)
	b := e.lock(f, locks.Options{TTL: long})
	second, err := b.Acquire(ctx, key)
	if err == nil {
		require.NoError(e.t, b.Release(ctx, second))
		return false
	}
	require.ErrorIs(e.t, err, locks.ErrNotAcquired)
	require.True(e.t, noExpiry)
	return true
}

func TestBrokenVariantsKeepTheBasics(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	ctx := context.Background()
	for _, name := range []string{"setnx-expire", "del-no-owner", "get-then-del", "no-ttl"} {
		t.Run(name, func(t *testing.T) {
			var stopped []string
			at := func(_ context.Context, point, key string) error {
				require.Equal(t, name, key)
				stopped = append(stopped, point)
				return nil
			}
			l, err := locks.New(name, c.Endpoints(), locks.Options{TTL: long, At: at})
			require.NoError(t, err)
			t.Cleanup(func() { locks.Close(l) })
			lease, err := l.Acquire(ctx, name)
			require.NoError(t, err)
			_, err = l.Acquire(ctx, name)
			require.ErrorIs(t, err, locks.ErrNotAcquired)
			require.NoError(t, l.Release(ctx, lease))
			require.Equal(t, locks.Points(name), stopped, "one acquire and release pass the variant's declared point once")
			require.ErrorContains(t, locks.HasPoint(name, "nowhere"), "has no point")
			require.ErrorIs(t, l.Release(ctx, lease), locks.ErrNotHeld)
			again, err := l.Acquire(ctx, name)
			require.NoError(t, err)
			require.NoError(t, l.Release(ctx, again))
			_, err = locks.New(name, endpoints.Unreachable(2), locks.Options{})
			require.ErrorContains(t, err, "needs one master group")
		})
	}
}
