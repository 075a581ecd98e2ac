package main

import (
	"context"
	"crypto/rand"

	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// The lock: SET NX PX, released and extended by scripts that act only
// while the key holds the holder's token. One file, one registration.
func init() {
	locks.Register("example-setnx", "EXAMPLE: SET NX PX on one master, owner-checked release and extend", newSetNX)
}

type setNX struct {
	rdb redis.UniversalClient
	o   locks.Options
}

// newSetNX builds the lock over the run's endpoints: a go-redis client,
// nothing dialled yet (a factory does no I/O).
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
	if err == nil && !ok {
		return nil, locks.ErrNotAcquired
	}
	if err != nil {
		return nil, err // the outcome is unknown
	}
	return &locks.Lease{Key: key, Token: token, TTL: l.o.TTL}, nil
}

var (
	releaseIfOurs = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`)
	extendIfOurs  = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) end return 0`)
)

func (l *setNX) Release(ctx context.Context, lease *locks.Lease) error {
	ctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
	defer cancel()
	n, err := releaseIfOurs.Run(ctx, l.rdb, []string{lease.Key}, lease.Token).Int()
	return locks.HeldResult(n != 0, err)
}

// Extend makes the lock an Extender: the heartbeat workload and the
// explorer's extend columns run on it.
func (l *setNX) Extend(ctx context.Context, lease *locks.Lease) error {
	ctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
	defer cancel()
	n, err := extendIfOurs.Run(ctx, l.rdb, []string{lease.Key}, lease.Token, l.o.TTL.Milliseconds()).Int()
	return locks.HeldResult(n != 0, err)
}

func (l *setNX) Close() error { return l.rdb.Close() }
