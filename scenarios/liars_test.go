package scenarios_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// Locks written as a new user might, wrong in ways that tempt a judge to
// take the lock's word. The client processes are this test binary, so
// registering them here makes them selectable there too.
func init() {
	locks.Register("liar-shared-token", "TEST: SET NX PX and an owner-checked release, with one token for every client",
		func(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
			rdb, err := locks.OneClient("liar-shared-token", e, o)
			return &sharedToken{rdb: rdb, o: o.WithDefaults()}, err
		})
	locks.Register("liar-late-lease", "TEST: the simple lock, but it hands each lease back only after its TTL passed, claiming a fresh deadline",
		func(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
			simple, err := locks.NewSimple(e, o)
			return &lateLease{simple: simple, o: o.WithDefaults()}, err
		})
}

type sharedToken struct {
	rdb redis.UniversalClient
	o   locks.Options
}

const theToken = "everyone"

var releaseIfMine = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`)

func (s *sharedToken) Acquire(ctx context.Context, key string) (*locks.Lease, error) {
	ok, err := s.rdb.SetNX(ctx, key, theToken, s.o.TTL).Result()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, locks.ErrNotAcquired
	}
	return &locks.Lease{Key: key, Token: theToken, TTL: s.o.TTL, Deadline: time.Now().Add(s.o.TTL)}, nil
}

func (s *sharedToken) Release(ctx context.Context, l *locks.Lease) error {
	n, err := releaseIfMine.Run(ctx, s.rdb, []string{l.Key}, theToken).Int()
	if err == nil && n == 0 {
		return locks.ErrNotHeld
	}
	return err
}

type lateLease struct {
	simple locks.Lock
	o      locks.Options
}

func (l *lateLease) Acquire(ctx context.Context, key string) (*locks.Lease, error) {
	start := time.Now()
	lease, err := l.simple.Acquire(ctx, key)
	if err != nil {
		return nil, err
	}
	// Late by more than the TTL, and by different amounts, as replies
	// delayed in a network are.
	time.Sleep(time.Until(start.Add(l.o.TTL + rand.N(2*l.o.TTL))))
	lease.Deadline = time.Now().Add(l.o.TTL) // a lie: it expired already
	return lease, nil
}

func (l *lateLease) Release(ctx context.Context, lease *locks.Lease) error {
	return l.simple.Release(ctx, lease)
}

func counterRun(t *testing.T, lock string, ttl, holdMin, holdMax time.Duration) *reports.Results {
	t.Helper()
	s := scenarios.Scenario{
		Shape: workloads.Shape{Clients: 6, Keys: []string{"k"}, TTL: scenarios.Duration(ttl), HoldMin: scenarios.Duration(holdMin), HoldMax: scenarios.Duration(holdMax), Pause: scenarios.Duration(10 * time.Millisecond)},
		Name:  "liar-" + lock, Expect: scenarios.Unsafe, Lock: lock, Workload: "counter",
		Cluster: cluster.Spec{Topology: cluster.Independent, Masters: 1}, Nemesis: "none", Time: scenarios.Duration(5 * time.Second),
	}
	res, err := s.Run(context.Background(), scenarios.RunOptions{Seed: 1, Store: t.TempDir(), Driver: clienttest.Command()})
	require.NoError(t, err)
	return res
}

func checkVerdict(r *reports.Results, name string) string { return r.CheckVerdict(name) }

// One token for everyone: a holder that outlived its lease releases the
// next holder's lock, which its token matches, and a third client gets in.
// The harness's lease ids see two leases where the lock shows one owner.
// The correct lock under the same slow holders keeps mutual exclusion.
func TestSharedTokenLockIsCaught(t *testing.T) {
	clustertest.RequireDocker(t)
	liar := counterRun(t, "liar-shared-token", 300*time.Millisecond, 100*time.Millisecond, 500*time.Millisecond)
	require.Equal(t, "invalid", checkVerdict(liar, "double-holds"), liar.Reason)
	require.Equal(t, "invalid", liar.Verdict)
	require.Positive(t, liar.Metric("double_holds"))

	honest := counterRun(t, "simple", 300*time.Millisecond, 100*time.Millisecond, 500*time.Millisecond)
	require.Equal(t, "valid", checkVerdict(honest, "double-holds"), honest.Reason)
	require.Equal(t, "valid", checkVerdict(honest, "lease-lock"))
}

// Leases handed back after their TTL: no window is ever open, so no
// double hold, but the clients use them together and the counter loses
// updates. The honest lock under the same load loses none.
func TestLateLeaseLockIsCaughtAtTheResource(t *testing.T) {
	clustertest.RequireDocker(t)
	liar := counterRun(t, "liar-late-lease", 300*time.Millisecond, 80*time.Millisecond, 200*time.Millisecond)
	require.Equal(t, "invalid", liar.Verdict, liar.Reason)
	require.Equal(t, "invalid", checkVerdict(liar, "lost-updates"), liar.Reason)
	require.Positive(t, liar.Metric("lost_updates"))
	require.Positive(t, liar.Stats.ExpiredOnArrival)

	// A 3 s lease for the honest lock: with 300 ms a holder stalled 100 ms
	// by a loaded machine outlives its lease and loses an update for real
	// (seen beside CPU hogs), which is the pause case, not this test's.
	honest := counterRun(t, "simple", 3*time.Second, 80*time.Millisecond, 200*time.Millisecond)
	require.Equal(t, "valid", honest.Verdict, honest.Reason)
	require.Zero(t, honest.Stats.ExpiredOnArrival)
}
