// Package bsmadapter drives bsm/redislock behind deadbolt's lock
// interface, as its users run it. It is a package of its own so that the
// in-tree lock bsm (deadbolt's own version) and the driver of bsm at any
// version (drivers/go/bsm) are this very adapter: it uses only what
// redislock has had since v0.9.0.
package bsmadapter

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/locks/clients/goredis9"
)

// Summary says what the lock is.
const Summary = "bsm/redislock unmodified over one master group (go-redis v9 and redislock at their defaults): Lua SET NX PX obtain, Refresh as extend, owner-checked release"

// lock keeps the *redislock.Lock of each lease, as an application keeps
// the lock Obtain returned: Refresh (extend) and Release are that lock's.
//
// It runs redislock as its README does: redislock.New over a go-redis v9
// client of the one master group (NewClient on an independent master,
// NewFailoverClient on Sentinel, NewClusterClient on a cluster), built
// from the endpoints' address, dialer (published ports, TLS) and
// credentials, and nothing else: go-redis's defaults (MaxRetries 3, its
// timeouts, its pool) and redislock's (NoRetry, Obtain bounded by the
// TTL when its context has no deadline), unless a knob says otherwise
// (goredis9's, and retry_backoff, retry_limit). Every call gets the
// context an application passes, one without a deadline.
//
// From v0.9.3 the caller may choose the token (Options.Token): the adapter
// does (a token of redislock's own kind, set by reflection so that one
// adapter builds v0.9.0 too) and marks a failed Obtain's error with it,
// so that the harness can look for it on the master after a refusal.
// redislock exposes no validity: the deadline is the acquire's start +
// TTL - drift.
type lock struct {
	c   *redislock.Client
	rdb redis.UniversalClient
	o   locks.Options

	held locks.Held[*redislock.Lock]
}

// The knobs of redislock itself, beside go-redis's.
const (
	retryBackoff = "retry_backoff"
	retryLimit   = "retry_limit"
)

// Knobs are go-redis v9's and redislock's Obtain options.
func Knobs() locks.Knobs {
	return append(goredis9.Knobs(),
		locks.Knob{Name: retryBackoff, Kind: locks.KnobDuration, Default: "0s", From: locks.FromRetryDelay,
			Summary: "redislock RetryStrategy LinearBackoff: the wait between two tries of an Obtain (0s: NoRetry, redislock's default, one try)"},
		locks.Knob{Name: retryLimit, Kind: locks.KnobInt, Default: "0", From: locks.FromRetries,
			Summary: "redislock LimitRetry: at most this many more tries (0: no limit but the Obtain's context, the TTL when it has no deadline)"})
}

// New builds redislock over the go-redis client of the one master group;
// nothing dials.
func New(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	if e.Groups() != 1 {
		return nil, fmt.Errorf("lock bsm runs on one master group, the topology has %d", e.Groups())
	}
	if err := e.Check(); err != nil {
		return nil, err
	}
	rdb := newClient(e, goredis9.ConfigOf(o.Settings))
	rdb.AddHook(tryHook{})
	return &lock{c: redislock.New(rdb), rdb: rdb, o: o}, nil
}

// tryHook tells the acquire under way each obtain script it sends (a
// try, with a retry strategy), changing nothing.
type tryHook struct{}

func (tryHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (tryHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n == "evalsha" || n == "eval" {
			locks.NoteTry(ctx) // only an acquire's context has the hook
		}
		return next(ctx, cmd)
	}
}

func (tryHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// newClient is the go-redis v9 client of the one master group, as a
// redislock user builds it, with the knobs the user changed.
func newClient(e endpoints.Endpoints, c goredis9.Config) redis.UniversalClient {
	d := e.Dialer()
	switch e.Topology {
	case endpoints.Sentinel:
		o := &redis.FailoverOptions{MasterName: e.MasterName, SentinelAddrs: e.Sentinels, Dialer: d.Dial,
			Username: e.Username, Password: e.Password, SentinelUsername: e.SentinelUsername, SentinelPassword: e.SentinelPassword}
		c.Failover(o)
		return redis.NewFailoverClient(o)
	case endpoints.Cluster:
		o := &redis.ClusterOptions{Addrs: e.ClusterNodes, Dialer: d.Dial, Username: e.Username, Password: e.Password}
		c.Cluster(o)
		return redis.NewClusterClient(o)
	}
	o := &redis.Options{Addr: e.Masters[0], Dialer: d.Dial, Username: e.Username, Password: e.Password}
	c.Client(o)
	return redis.NewClient(o)
}

func (l *lock) Close() error { return l.rdb.Close() }

// Behaviour is go-redis's, and the longest call: an Obtain's tries (a
// deadline of a TTL when it has none, redislock's own) each sending one
// command, or one Release or Refresh.
func (l *lock) Behaviour() locks.Behaviour {
	b := goredis9.Behaviour(l.rdb)
	one, ok := goredis9.SendsOf(l.rdb).Longest()
	if !ok {
		b.LongestCallMS = -1
		return b
	}
	// The Obtain's deadline ends its tries, not a command already sent:
	// go-redis's reads follow their own timeout unless it cuts them at the
	// context's (context_timeout_enabled).
	b.LongestCallMS = locks.Millis(l.o.TTL + one)
	return b
}

// retry is the Obtain's RetryStrategy, as the knobs build it.
func (l *lock) retry() redislock.RetryStrategy {
	backoff := l.o.Settings.Duration(retryBackoff)
	if backoff <= 0 {
		return redislock.NoRetry()
	}
	s := redislock.LinearBackoff(backoff)
	if n := l.o.Settings.Int(retryLimit); n > 0 {
		s = redislock.LimitRetry(s, n)
	}
	return s
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
	opt := &redislock.Options{RetryStrategy: l.retry()}
	tried := withToken(opt)
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
	if err := answer(lk.Refresh(ctx, l.o.TTL, nil), redislock.ErrNotObtained); err != nil {
		return err
	}
	lease.Deadline = l.o.Deadline(start)
	return nil
}
