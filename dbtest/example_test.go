package dbtest_test

import (
	"context"
	"crypto/rand"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/dbtest"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// setNX is a lock as a Go team might write it: SET NX PX, released by a
// script that deletes the key only while it holds the holder's token.
type setNX struct {
	rdb redis.UniversalClient
	o   locks.Options
}

// newSetNX is its factory: go-redis over the endpoints, nothing dialled yet.
func newSetNX(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	rdb, err := locks.OneClient("example-setnx", e, o)
	if err != nil {
		return nil, err
	}
	return &setNX{rdb: rdb, o: o}, nil
}

func (l *setNX) Acquire(ctx context.Context, key string) (*locks.Lease, error) {
	ctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
	defer cancel()
	token := rand.Text()
	ok, err := l.rdb.SetNX(ctx, key, token, l.o.TTL).Result()
	switch {
	case err != nil:
		return nil, err // the outcome is unknown
	case !ok:
		return nil, locks.ErrNotAcquired
	}
	return &locks.Lease{Key: key, Token: token, TTL: l.o.TTL}, nil
}

var releaseIfOurs = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`)

func (l *setNX) Release(ctx context.Context, lease *locks.Lease) error {
	ctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
	defer cancel()
	n, err := releaseIfOurs.Run(ctx, l.rdb, []string{lease.Key}, lease.Token).Int()
	if err == nil && n == 0 {
		return locks.ErrNotHeld
	}
	return err
}

func (l *setNX) Close() error { return l.rdb.Close() }

// TestMain registers the lock, then lets this test binary serve as the
// client processes.
func TestMain(m *testing.M) {
	dbtest.Register("example-setnx", "EXAMPLE: SET NX PX, owner-checked release, written against dbtest", newSetNX)
	dbtest.Main(m)
}

// TestExampleLock is the test a Go team writes for its own lock, run against
// real containers by `make test`: it fails if a verdict is not the one stated.
func TestExampleLock(t *testing.T) {
	dbtest.Run(t, "example-setnx", dbtest.Expect{
		"pause-simple": dbtest.Unsafe, // a holder paused past its TTL destroys others' updates
		"crash-simple": dbtest.Safe,   // the TTL frees a dead holder's key
	})
}

// Run, in a test of your own lock: TestMain registers the lock (dbtest.Register)
// and calls dbtest.Main; the test names each scenario with the verdict it
// expects.
func ExampleRun() {
	testMyLock := func(t *testing.T) {
		dbtest.Run(t, "example-setnx", dbtest.Expect{
			"failover-simple": dbtest.Unsafe, // asynchronous replication loses it
			"crash-simple":    dbtest.Safe,
		}, dbtest.Seeds(1, 2, 3))
	}
	_ = testMyLock
}
