package adapters_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

func TestRueidisRunsOverOneMasterGroupFollowingAnnouncements(t *testing.T) {
	require.NoError(t, locks.Fits("rueidis", 1))
	require.ErrorContains(t, locks.Fits("rueidis", 3), "needs one master group")
	e := endpoints.Endpoints{Topology: endpoints.Sentinel, MasterName: "m", Sentinels: []string{"sentinel-1:26379"},
		Addresses: map[string]string{"sentinel-1:26379": "127.0.0.1:1"}}
	_, err := locks.New("rueidis", e, locks.Options{Conn: endpoints.ClientOptions{SentinelOnDial: true}})
	require.ErrorContains(t, err, "no reconnect mode")
	l, err := locks.New("rueidis", e, locks.Options{})
	require.NoError(t, err, "the factory dials nothing, so no Sentinel needs to answer")
	require.NoError(t, locks.Close(l))
}

// A node that refuses connections fails the acquire (the client could not
// even be built): certain, and no refusal of the key.
func TestRueidisUnreachableMasterIsNoRefusal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	e := endpoints.Endpoints{Topology: endpoints.Independent, Masters: []string{"redis-1:6379"},
		Addresses: map[string]string{"redis-1:6379": addr}}
	l, err := locks.New("rueidis", e, locks.Options{TTL: time.Second})
	require.NoError(t, err)
	defer locks.Close(l)
	_, err = l.Acquire(context.Background(), "k")
	require.Error(t, err)
	require.True(t, locks.Failed(err), "nothing was sent: %v", err)
	require.False(t, locks.Refused(err), "an unreachable node is no refusal: %v", err)
}

// renewals records what a lock reports of its own work.
type renewals struct {
	mu      sync.Mutex
	invoked int
	results []error
}

func (r *renewals) Renewing(*locks.Lease) { r.mu.Lock(); r.invoked++; r.mu.Unlock() }
func (r *renewals) Renewed(_ *locks.Lease, err error) {
	r.mu.Lock()
	r.results = append(r.results, err)
	r.mu.Unlock()
}

func (r *renewals) seen() (invoked int, results []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.invoked, append([]error(nil), r.results...)
}

func TestRueidis(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	master := c.ByRole(cluster.RoleRedis)[0].Client()
	t.Cleanup(func() { master.Close() })
	ctx := context.Background()

	// rueidislock extends its key every TTL/2 while the holder lives; each
	// extension is a renewal the harness hears of, and the key outlives
	// its TTL while the lease is held.
	t.Run("extends while held and says so", func(t *testing.T) {
		const ttl = 600 * time.Millisecond
		ev := &renewals{}
		l := clustertest.NewLock(t, "rueidis", c, locks.Options{TTL: ttl, Events: ev})
		other := clustertest.NewLock(t, "rueidis", c, locks.Options{TTL: ttl})
		start := time.Now()
		lease, err := l.Acquire(ctx, "extended")
		require.NoError(t, err)
		require.NotEmpty(t, lease.Token)
		first := lease.Deadline
		require.WithinDuration(t, start.Add(ttl), first, 200*time.Millisecond, "rueidislock claims its key validity (PXAT)")
		renewed := func() (ok int) {
			_, results := ev.seen()
			for _, err := range results {
				// A script new to the node (NOSCRIPT) is sent again whole:
				// an attempt with certainly no effect, then the renewal.
				if err != nil {
					require.ErrorIs(t, err, locks.ErrNoEffect)
					continue
				}
				ok++
			}
			return ok
		}
		require.Eventually(t, func() bool { return renewed() >= 3 }, 10*time.Second, 10*time.Millisecond, "three extensions, one every TTL/2")
		require.True(t, lease.Deadline.After(first), "each extension claims a later deadline")
		require.Greater(t, time.Since(start), ttl, "held past its TTL")
		require.Equal(t, int64(1), master.Exists(ctx, "rueidislock:0:extended").Val())
		_, err = other.Acquire(ctx, "extended")
		require.ErrorIs(t, err, locks.ErrNotAcquired)
		require.True(t, locks.Refused(err), "the key is taken: %v", err)
		require.NoError(t, l.Release(ctx, lease))
		held := time.Since(start)
		require.Zero(t, master.Exists(ctx, "rueidislock:0:extended").Val(), "released")
		n, results := ev.seen()
		require.Equal(t, n, len(results), "every renewal reported is answered")
		// Without NOLOOP the holder's own extension invalidates its own
		// key, which triggers the next one: thousands a second.
		require.LessOrEqual(t, n, int(held/(ttl/2))+3, "one extension every TTL/2 in %s (one more for NOSCRIPT), no storm", held)
		select {
		case <-lease.Lost:
			t.Fatal("a released lease is not lost")
		default:
		}
		again, err := other.Acquire(ctx, "extended")
		require.NoError(t, err)
		require.NoError(t, other.Release(ctx, again))
	})

	// A key deleted behind the holder's back is invalidated on its
	// tracking connection: rueidislock extends at once, finds it gone and
	// ends the lock. The lease is lost, and its release was no longer ours.
	t.Run("loss is seen through client-side caching", func(t *testing.T) {
		ev := &renewals{}
		l := clustertest.NewLock(t, "rueidis", c, locks.Options{TTL: 10 * time.Second, Events: ev})
		lease, err := l.Acquire(ctx, "stolen")
		require.NoError(t, err)
		require.NoError(t, master.Del(ctx, "rueidislock:0:stolen").Err())
		select {
		case <-lease.Lost:
		case <-time.After(5 * time.Second):
			t.Fatal("the holder never learned its key was gone (the next timed extension is 5 s away)")
		}
		require.Eventually(t, func() bool { _, r := ev.seen(); return len(r) > 0 }, 5*time.Second, 10*time.Millisecond)
		_, results := ev.seen()
		require.ErrorIs(t, results[len(results)-1], locks.ErrNotHeld, "the extension found the key gone")
		require.ErrorIs(t, l.Release(ctx, lease), locks.ErrNotHeld)
	})

	t.Run("non-owner release is refused", func(t *testing.T) { nonOwnerReleaseIsRefused(t, "rueidis", c) })
	t.Run("mutual exclusion under contention", func(t *testing.T) { mutualExclusionUnderContention(t, "rueidis", c) })
}

// The adapter builds rueidis's own Sentinel client over the endpoints: after
// a failover it takes locks on the new master, and a lease held across a
// graceful failover (which waits for the replica) lives on there.
func TestRueidisFollowsASentinelFailover(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Sentinel})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A TTL far longer than the failover: no timed extension falls in it,
	// and the promoted replica has the key with its expiry.
	l := clustertest.NewLock(t, "rueidis", c, locks.Options{TTL: 30 * time.Second})
	held, err := l.Acquire(ctx, "across")
	require.NoError(t, err)
	old, err := c.Master(ctx)
	require.NoError(t, err)
	s := c.ByRole(cluster.RoleSentinel)[0].Client()
	defer s.Close()
	require.NoError(t, s.Do(ctx, "SENTINEL", "FAILOVER", cluster.MasterName).Err())
	var promoted *cluster.Node
	require.Eventually(t, func() bool {
		m, err := c.Master(ctx)
		promoted = m
		return err == nil && m.Name != old.Name
	}, time.Minute, 100*time.Millisecond, "Sentinel never promoted a replica")
	onNew := promoted.Client()
	defer onNew.Close()
	// Until the client has switched, an acquire may still go to the
	// demoted master (refused there: it is read-only now), and a release
	// sent while it switches may meet either master (make test saw "lock
	// was no longer held" once): the client has followed when an acquire
	// and its release both land on the new master.
	for deadline := time.Now().Add(30 * time.Second); ; {
		lease, err := l.Acquire(ctx, "after")
		if err == nil {
			taken := onNew.Exists(ctx, "rueidislock:0:after").Val() == 1
			err = l.Release(ctx, lease)
			if taken && err == nil {
				require.Zero(t, onNew.Exists(ctx, "rueidislock:0:after").Val(), "released on the new master")
				break
			}
		}
		require.True(t, time.Now().Before(deadline), "no acquire landed on the new master %s (last: %v)", promoted.Name, err)
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case <-held.Lost:
		t.Fatal("the lease held across the failover was given up, though the promoted replica has it")
	default:
	}
	require.NoError(t, l.Release(ctx, held), "released on the new master")
	require.Zero(t, onNew.Exists(ctx, "rueidislock:0:across").Val())
}
