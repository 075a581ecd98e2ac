package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"reflect"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// lock keeps the *redislock.Lock of each lease, as an application keeps
// the lock Obtain returned: Refresh (extend) and Release are that lock's.
//
// The go-redis client is built as a redislock user builds one: the
// endpoints' address, dialer (published ports, TLS) and credentials, the
// call timeouts and pool size asked for, and everything else go-redis's
// default, MaxRetries (3) included: a command that timed out after it was
// sent is sent again, which is part of what is judged here. Only
// go-redis's maintenance notifications are off where it has them (not on
// Sentinel), a Redis Enterprise feature that resolves the logical host
// names and sends a handshake command deadbolt's nodes refuse.
//
// Acquire is one Obtain with the lease TTL and a RetryStrategy that
// retries a refusal as every driver does (Retries more tries, or until
// Wait has passed, after a random delay up to RetryDelay). From v0.9.3
// the caller may choose the token (Options.Token): the adapter does
// (set by reflection, so that one adapter builds v0.9.0 too) and marks a
// failed Obtain's error with it, so that the harness can look for it on
// the master after a refusal. redislock exposes no validity: the deadline
// is the acquire's start + TTL - drift.
type lock struct {
	c     *redislock.Client
	rdb   redis.UniversalClient
	o     locks.Options
	tries int // go-redis's tries of one command: its MaxRetries + 1

	held locks.Held[*redislock.Lock]
}

func newLock(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	if e.Groups() != 1 {
		return nil, fmt.Errorf("lock bsm runs on one master group, the topology has %d", e.Groups())
	}
	if err := e.Check(); err != nil {
		return nil, err
	}
	o = o.WithDefaults()
	rdb, tries := newClient(e, o.Conn)
	return &lock{c: redislock.New(rdb), rdb: rdb, o: o, tries: tries}, nil
}

// newClient is the go-redis v9 client of the one master group and how many
// times it sends a command at most.
func newClient(e endpoints.Endpoints, c endpoints.ClientOptions) (redis.UniversalClient, int) {
	d := e.Dialer()
	off := func() *maintnotifications.Config {
		return &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	}
	switch e.Topology {
	case endpoints.Sentinel:
		rdb := redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: e.MasterName, SentinelAddrs: e.Sentinels, Dialer: d.Dial,
			Username: e.Username, Password: e.Password,
			SentinelUsername: e.SentinelUsername, SentinelPassword: e.SentinelPassword,
			DialTimeout: c.DialTimeout, ReadTimeout: c.ReadTimeout, WriteTimeout: c.WriteTimeout,
			PoolSize: c.PoolSize,
		})
		return rdb, rdb.Options().MaxRetries + 1
	case endpoints.Cluster:
		rdb := redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: e.ClusterNodes, Dialer: d.Dial, Username: e.Username, Password: e.Password,
			DialTimeout: c.DialTimeout, ReadTimeout: c.ReadTimeout, WriteTimeout: c.WriteTimeout,
			PoolSize: c.PoolSize, MaintNotificationsConfig: off(),
		})
		// Each redirect is another try too.
		return rdb, rdb.Options().MaxRedirects + 1
	}
	rdb := redis.NewClient(&redis.Options{
		Addr: e.Masters[0], Dialer: d.Dial, Username: e.Username, Password: e.Password,
		DialTimeout: c.DialTimeout, ReadTimeout: c.ReadTimeout, WriteTimeout: c.WriteTimeout,
		PoolSize: c.PoolSize, MaintNotificationsConfig: off(),
	})
	return rdb, rdb.Options().MaxRetries + 1
}

func (l *lock) Close() error { return l.rdb.Close() }

// ResendsTimedOut: go-redis sends a command that timed out again, its
// MaxRetries times by default (locks.Resender).
func (l *lock) ResendsTimedOut() bool { return l.tries > 1 }

// call bounds one redislock call that sends one command: go-redis's tries,
// each bounded by the call timeout, and its backoffs between them (at most
// 512 ms each by default). go-redis's own timeouts end a try; the context
// only keeps a hung call from outliving the harness's patience.
func (l *lock) call() time.Duration {
	return time.Duration(l.tries) * (l.o.Timeout + 512*time.Millisecond)
}

// retry is redislock's RetryStrategy for one acquire: a random delay up
// to RetryDelay after each refusal, while fewer than Retries retries were
// made or Wait has not passed; 0 (stop) after that.
type retry struct {
	o      locks.Options
	giveUp time.Time
	n      int
}

func (r *retry) NextBackoff() time.Duration {
	if r.n >= r.o.Retries && !time.Now().Before(r.giveUp) {
		return 0
	}
	r.n++
	if r.o.RetryDelay <= 0 {
		return 1 // 0 would mean stop
	}
	return 1 + mrand.N(r.o.RetryDelay)
}

// token is a fresh token of redislock's own kind (16 random bytes).
func token() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// withToken sets opt.Token when this version has it (v0.9.3 on), and
// says which.
func withToken(opt *redislock.Options) string {
	f := reflect.ValueOf(opt).Elem().FieldByName("Token")
	if !f.IsValid() || f.Kind() != reflect.String {
		return ""
	}
	t := token()
	f.SetString(t)
	return t
}

func (l *lock) Acquire(ctx context.Context, key string) (*locks.Lease, error) {
	start := time.Now()
	opt := &redislock.Options{RetryStrategy: &retry{o: l.o, giveUp: start.Add(l.o.Wait)}}
	tried := withToken(opt)
	n := time.Duration(l.o.Retries)
	ctx, cancel := context.WithTimeout(ctx, l.o.Wait+(n+1)*l.call()+n*l.o.RetryDelay)
	defer cancel()
	lk, err := l.c.Obtain(ctx, key, l.o.TTL, opt)
	switch {
	case errors.Is(err, redislock.ErrNotObtained):
		// Every try was answered: the key was taken (not a refusal when
		// the context ended the backoff, which locks.Refused tells).
		return nil, locks.WithToken(fmt.Errorf("%w: bsm: %w", locks.ErrNotAcquired, err), tried)
	case err != nil && locks.Unapplied(err):
		// The last try was never sent (or refused unrun). With go-redis's
		// retries an earlier one may have been: the library's error says
		// no more.
		return nil, locks.WithToken(errors.Join(locks.ErrNotAcquired, err), tried)
	case err != nil:
		return nil, locks.WithToken(fmt.Errorf("bsm: %w", err), tried)
	}
	lease := &locks.Lease{Key: key, Token: lk.Token(), TTL: l.o.TTL, Deadline: l.o.Deadline(start)}
	l.held.Put(lease, lk)
	return lease, nil
}

func (l *lock) Release(ctx context.Context, lease *locks.Lease) error {
	lk, err := l.held.Get(lease, true, "bsm")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, l.call())
	defer cancel()
	return answer(lk.Release(ctx), redislock.ErrLockNotHeld)
}

// answer maps a call on a held lock: the library's own "not held"
// (notHeld) is the lock saying no, a call that never ran had no effect,
// any other error leaves the outcome unknown.
func answer(err, notHeld error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, notHeld):
		return fmt.Errorf("%w: bsm: %w", locks.ErrNotHeld, err)
	case locks.Unapplied(err):
		return errors.Join(locks.ErrNoEffect, err)
	}
	return fmt.Errorf("bsm: %w", err)
}

// Extend is the lock's Refresh with the lease TTL (no retry strategy:
// Refresh's default); the deadline moves as an acquire's.
func (l *lock) Extend(ctx context.Context, lease *locks.Lease) error {
	lk, err := l.held.Get(lease, false, "bsm")
	if err != nil {
		return err
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, l.call())
	defer cancel()
	if err := answer(lk.Refresh(ctx, l.o.TTL, nil), redislock.ErrNotObtained); err != nil {
		return err
	}
	lease.Deadline = l.o.Deadline(start)
	return nil
}
