//go:build deadbolt_driver

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// lock keeps the *redis.RedisLock of each lease, as an application keeps
// the lock object it acquired with; Reacquire is that object's Acquire
// again. go-zero takes whole seconds (SetExpire) and sets a longer TTL
// than it is given (500 ms more from v1.3.2, a second more before): the
// adapter gives it the TTL's seconds, rounded up, and reports the TTL the
// key got, read with PTTL right after the grant (a read that changes
// nothing), so that the judge holds the lock to the lease it really set.
//
// go-zero dials the address it is given with its own go-redis client
// (MaxRetries 3, go-redis's defaults otherwise: client.go) and no dialer
// of the caller's: it runs on one independent master, reached
// at its published address, without TLS, and authenticates with the
// password alone (the nodes' default user is the lock user). Its
// circuit breaker refuses calls after errors without sending them
// ("service unavailable"): no effect.
type lock struct {
	store *redis.Redis
	key   func(string) string
	o     locks.Options

	held locks.Held[*redis.RedisLock]
}

func newLock(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	if e.Topology != endpoints.Independent || len(e.Masters) != 1 {
		return nil, fmt.Errorf("lock gozero runs on one independent master: go-zero's client dials one address by itself (no Sentinel, no dialer)")
	}
	if err := e.Check(); err != nil {
		return nil, err
	}
	if e.TLSCA != "" {
		return nil, fmt.Errorf("lock gozero cannot verify the nodes' certificates: go-zero's WithTLS takes no CA")
	}
	addr, ok := e.Addresses[e.Masters[0]]
	if !ok {
		addr = e.Masters[0]
	}
	logx.Disable()
	o = o.WithDefaults()
	store := redis.New(addr, redis.WithPass(e.Password))
	return &lock{store: store, o: o}, nil
}

func (l *lock) seconds() int { return int((l.o.TTL + time.Second - 1) / time.Second) }

func (l *lock) Acquire(_ context.Context, key string) (*locks.Lease, error) {
	rl := redis.NewRedisLock(l.store, key)
	rl.SetExpire(l.seconds())
	start := time.Now()
	ok, err := rl.Acquire()
	switch {
	case err != nil && unsent(err):
		return nil, errors.Join(locks.ErrNotAcquired, err)
	case err != nil:
		return nil, fmt.Errorf("gozero: %w", err)
	case !ok:
		return nil, fmt.Errorf("%w: gozero Acquire said false", locks.ErrNotAcquired)
	}
	lease := &locks.Lease{Key: key}
	token, ttl, err := l.granted(key, start)
	if err != nil {
		// Taken, but whose key it is cannot be told: an outcome the
		// harness cannot name is unknown, never a grant without a token.
		return nil, fmt.Errorf("gozero: Acquire said true, and its key could not be read for the token: %w", err)
	}
	lease.Token, lease.TTL = token, ttl
	lease.Deadline = start.Add(lease.TTL)
	l.held.Put(lease, rl)
	return lease, nil
}

// granted reads the key right after a grant, a read that changes
// nothing: its value (the lock's token: go-zero keeps its id private) and
// the lease time it got from a call begun at start (its PTTL plus the
// time since), or go-zero's longest (seconds + 1) when that cannot be
// read. The read is tried three times (a loaded machine times one out);
// an error is a token that could not be read.
func (l *lock) granted(key string, start time.Time) (token string, ttl time.Duration, err error) {
	var reply []any
	for try := 0; try < 3; try++ {
		var v any
		if v, err = l.store.Eval(`return {redis.call("GET", KEYS[1]), redis.call("PTTL", KEYS[1])}`, []string{key}); err == nil {
			reply, _ = v.([]any)
			break
		}
	}
	if err != nil {
		return "", 0, err
	}
	if len(reply) != 2 {
		return "", 0, fmt.Errorf("the read of %s answered %v", key, reply)
	}
	token, _ = reply[0].(string)
	if token == "" {
		return "", 0, fmt.Errorf("%s was gone right after the grant", key)
	}
	ms, _ := reply[1].(int64)
	if ms <= 0 {
		return token, time.Duration(l.seconds()+1) * time.Second, nil
	}
	return token, time.Duration(ms)*time.Millisecond + time.Since(start).Round(time.Millisecond) + time.Millisecond, nil
}

func (l *lock) Release(_ context.Context, lease *locks.Lease) error {
	rl, err := l.held.Get(lease, true, "gozero")
	if err != nil {
		return err
	}
	ok, err := rl.Release()
	switch {
	case err != nil && unsent(err):
		return errors.Join(locks.ErrNoEffect, err)
	case err != nil:
		return fmt.Errorf("gozero: %w", err)
	case !ok:
		return fmt.Errorf("%w: gozero Release said false", locks.ErrNotHeld)
	}
	return nil
}

// Reacquire is Acquire again on the RedisLock that granted the lease.
func (l *lock) Reacquire(_ context.Context, lease *locks.Lease) error {
	rl, err := l.held.Get(lease, false, "gozero")
	if err != nil {
		return err
	}
	start := time.Now()
	ok, err := rl.Acquire()
	switch {
	case err != nil && unsent(err):
		return errors.Join(locks.ErrNoEffect, err)
	case err != nil:
		return fmt.Errorf("gozero: %w", err)
	case !ok:
		return fmt.Errorf("%w: gozero Acquire again said false", locks.ErrNotHeld)
	}
	// The lease time it says it got; go-zero's longest when the key cannot
	// be read (v1.3.1 answers without Redis, so it may be gone or another's).
	lease.TTL = time.Duration(l.seconds()+1) * time.Second
	if _, ttl, err := l.granted(lease.Key, start); err == nil {
		lease.TTL = ttl
	}
	lease.Deadline = start.Add(lease.TTL)
	return nil
}

func (l *lock) Close() error { return nil }

// Behaviour is go-zero's client's (goZeroClient).
func (l *lock) Behaviour() locks.Behaviour {
	b, _ := goZeroClient()
	return b
}

// unsent: the call never reached Redis (a refused dial, or the circuit
// breaker's refusal).
func unsent(err error) bool {
	var op *net.OpError
	return (errors.As(err, &op) && op.Op == "dial") || strings.Contains(err.Error(), "circuit breaker is open")
}
