package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	goredis "github.com/go-redis/redis/v8"
	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	rsgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v8"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/locks/adapters/redsyncanswer"
)

// lock keeps the *redsync.Mutex of each lease, as an application keeps the
// mutex it locked: Unlock and Extend are that mutex's. Options map onto
// the mutex's: TTL -> WithExpiry, Retries -> WithTries(Retries+1) with a
// random delay up to RetryDelay, DriftFactor -> WithDriftFactor. The value
// is redsync's own kind (16 random bytes, base64), made through
// WithGenValueFunc so that the lease carries it. The deadline is computed
// as redsync's validity is (not every v4 version exports Until). Its
// answers are read by redsyncanswer, as the in-tree adapter's are.
type lock struct {
	rs      *redsync.Redsync
	clients []*goredis.Client
	o       locks.Options

	held  locks.Held[*redsync.Mutex]
	mu    sync.Mutex
	tries map[string]string // the value of the acquire under way, by key
}

func newLock(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	if e.Topology == endpoints.Cluster {
		return nil, locks.IndependentMasters("redsync", e)
	}
	if e.Groups() < 1 {
		return nil, fmt.Errorf("lock redsync needs at least one master")
	}
	if err := e.Check(); err != nil {
		return nil, err
	}
	o = o.WithDefaults()
	clients := clientsV8(e, o)
	pools := make([]rsredis.Pool, len(clients))
	for i, c := range clients {
		pools[i] = rsgoredis.NewPool(c)
	}
	return &lock{rs: redsync.New(pools...), clients: clients, o: o, tries: map[string]string{}}, nil
}

func (l *lock) Close() error {
	var errs []error
	for _, c := range l.clients {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

func (l *lock) mutex(key string, value *string) *redsync.Mutex {
	delay := l.o.RetryDelay
	return l.rs.NewMutex(key,
		redsync.WithExpiry(l.o.TTL),
		redsync.WithTries(l.o.Retries+1),
		redsync.WithRetryDelayFunc(func(int) time.Duration { return randN(delay) }),
		redsync.WithDriftFactor(l.o.DriftFactor),
		redsync.WithGenValueFunc(func() (string, error) {
			b := make([]byte, 16)
			if _, err := rand.Read(b); err != nil {
				return "", err
			}
			*value = base64.StdEncoding.EncodeToString(b)
			return *value, nil
		}))
}

func (l *lock) Acquire(ctx context.Context, key string) (*locks.Lease, error) {
	var value string
	m := l.mutex(key, &value)
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, time.Duration(l.o.Retries+1)*(l.o.Timeout+l.o.RetryDelay))
	defer cancel()
	err := m.LockContext(cctx)
	if err == nil {
		lease := &locks.Lease{Key: key, Token: value, TTL: l.o.TTL, Deadline: l.o.Deadline(start)}
		l.held.Put(lease, m)
		return lease, nil
	}
	inTime := redsyncanswer.InTime(time.Since(start), l.o.TTL, l.o.DriftFactor)
	return nil, redsyncanswer.Acquire(err, cctx.Err(), len(l.clients), inTime)
}

func (l *lock) Release(ctx context.Context, lease *locks.Lease) error {
	m, err := l.held.Get(lease, true, "redsync")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
	defer cancel()
	ok, err := m.UnlockContext(ctx)
	return redsyncanswer.Held("unlock", ok, err, len(l.clients))
}

// Extend is the mutex's ExtendContext; the deadline moves as an acquire's.
func (l *lock) Extend(ctx context.Context, lease *locks.Lease) error {
	m, err := l.held.Get(lease, false, "redsync")
	if err != nil {
		return err
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
	defer cancel()
	ok, err := m.ExtendContext(ctx)
	if err := redsyncanswer.Held("extend", ok, err, len(l.clients)); err != nil {
		return err
	}
	lease.Deadline = l.o.Deadline(start)
	return nil
}

func randN(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	n := uint64(0)
	for _, x := range b {
		n = n<<8 | uint64(x)
	}
	return time.Duration(n % uint64(d))
}

// clientsV8 is one go-redis v8 client per master group, as a user of
// redsync's v8 pool builds them: a failover client on Sentinel, one client
// per independent master. Every dial goes through the endpoints' Dialer
// (published ports, TLS); no retries, so that an outcome is never guessed.
func clientsV8(e endpoints.Endpoints, o locks.Options) []*goredis.Client {
	d := e.Dialer()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) { return d.Dial(ctx, network, addr) }
	c := o.Conn
	if e.Topology == endpoints.Sentinel {
		return []*goredis.Client{goredis.NewFailoverClient(&goredis.FailoverOptions{
			MasterName: e.MasterName, SentinelAddrs: e.Sentinels, Dialer: dial,
			Username: e.Username, Password: e.Password,
			SentinelUsername: e.SentinelUsername, SentinelPassword: e.SentinelPassword,
			DialTimeout: c.DialTimeout, ReadTimeout: c.ReadTimeout, WriteTimeout: c.WriteTimeout,
			PoolSize: c.PoolSize, MaxRetries: -1,
		})}
	}
	var out []*goredis.Client
	for _, m := range e.Masters {
		out = append(out, goredis.NewClient(&goredis.Options{
			Addr: m, Dialer: dial, Username: e.Username, Password: e.Password,
			DialTimeout: c.DialTimeout, ReadTimeout: c.ReadTimeout, WriteTimeout: c.WriteTimeout,
			PoolSize: c.PoolSize, MaxRetries: -1,
		}))
	}
	return out
}
