package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/go-redsync/redsync"
	"github.com/gomodule/redigo/redis"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// lock keeps the *redsync.Mutex of each lease, as an application keeps the
// mutex it locked. redsync v1 swallows every Redis error into a false (a
// failed Lock, a false Unlock or Extend), so the adapter reads each reply
// on the connections it lends the library (observer), changing none, and
// reports a call in which a command failed as unknown rather than as the
// no the library made of it.
type lock struct {
	rs    *redsync.Redsync
	pools []*redis.Pool
	o     locks.Options
	seen  *observer

	held locks.Held[*redsync.Mutex]
}

func newLock(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	if e.Topology != endpoints.Independent {
		return nil, fmt.Errorf("lock redsync (v1) runs on independent masters: redigo has no Sentinel or cluster client")
	}
	if err := e.Check(); err != nil {
		return nil, err
	}
	o = o.WithDefaults()
	d := e.Dialer()
	seen := &observer{errs: map[string]int{}}
	var pools []*redis.Pool
	var rp []redsync.Pool
	for _, addr := range e.Masters {
		p := &redis.Pool{MaxIdle: o.Conn.PoolSize, Dial: func() (redis.Conn, error) {
			c, err := redis.Dial("tcp", addr,
				redis.DialNetDial(func(network, a string) (net.Conn, error) {
					ctx, cancel := context.WithTimeout(context.Background(), o.Conn.DialTimeout)
					defer cancel()
					return d.Dial(ctx, network, a)
				}),
				redis.DialReadTimeout(o.Conn.ReadTimeout), redis.DialWriteTimeout(o.Conn.WriteTimeout))
			if err != nil {
				return nil, err
			}
			// redigo v2.0.0+incompatible sends no user name: the password
			// alone makes it the nodes' default user, the lock user.
			if e.Password != "" {
				if _, err := c.Do("AUTH", e.Password); err != nil {
					c.Close()
					return nil, err
				}
			}
			return c, nil
		}}
		pools = append(pools, p)
		rp = append(rp, observedPool{p, seen})
	}
	return &lock{rs: redsync.New(rp), pools: pools, o: o, seen: seen}, nil
}

func (l *lock) Close() error {
	var errs []error
	for _, p := range l.pools {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

func (l *lock) Acquire(_ context.Context, key string) (*locks.Lease, error) {
	var value string
	m := l.rs.NewMutex(key,
		redsync.SetExpiry(l.o.TTL),
		redsync.SetTries(l.o.Retries+1),
		redsync.SetRetryDelay(l.o.RetryDelay),
		redsync.SetDriftFactor(l.o.DriftFactor),
		redsync.SetGenValueFunc(func() (string, error) {
			b := make([]byte, 16)
			if _, err := rand.Read(b); err != nil {
				return "", err
			}
			value = base64.StdEncoding.EncodeToString(b)
			return value, nil
		}))
	start := time.Now()
	err := m.Lock()
	failed := l.seen.take(value)
	if err == nil {
		lease := &locks.Lease{Key: key, Token: value, TTL: l.o.TTL, Deadline: l.o.Deadline(start)}
		l.held.Put(lease, m)
		return lease, nil
	}
	switch {
	case failed > 0:
		return nil, fmt.Errorf("redsync: %w (%d of its commands failed; it says only that)", err, failed)
	case len(l.pools) == 1 && time.Since(start) < l.o.TTL/2:
		return nil, fmt.Errorf("%w: redsync: %w", locks.ErrNotAcquired, err)
	}
	return nil, fmt.Errorf("%w: redsync: %w (%w)", locks.ErrNotAcquired, err, locks.ErrUndone)
}

func (l *lock) Release(_ context.Context, lease *locks.Lease) error {
	m, err := l.held.Get(lease, true, "redsync")
	if err != nil {
		return err
	}
	ok := unlockOf(m)
	return l.answer("unlock", ok, l.seen.take(lease.Token))
}

func (l *lock) Extend(_ context.Context, lease *locks.Lease) error {
	m, err := l.held.Get(lease, false, "redsync")
	if err != nil {
		return err
	}
	start := time.Now()
	ok := extendOf(m)
	if err := l.answer("extend", ok, l.seen.take(lease.Token)); err != nil {
		return err
	}
	lease.Deadline = l.o.Deadline(start)
	return nil
}

// answer maps the library's bool as it gave it: true is yes; false is no
// unless a command of the call failed, when it is unknown.
func (l *lock) answer(call string, ok bool, failed int) error {
	switch {
	case ok:
		return nil
	case failed > 0:
		return fmt.Errorf("redsync %s said false, and %d of its commands failed", call, failed)
	}
	return fmt.Errorf("%w: redsync %s said false", locks.ErrNotHeld, call)
}

// observer counts, per lock value, the commands that failed (an error
// other than NOSCRIPT, which redigo's Script answers by sending the
// script whole).
type observer struct {
	mu   sync.Mutex
	errs map[string]int
}

func (o *observer) take(value string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := o.errs[value]
	delete(o.errs, value)
	return n
}

type observedPool struct {
	p    *redis.Pool
	seen *observer
}

func (p observedPool) Get() redis.Conn { return observedConn{p.p.Get(), p.seen} }

type observedConn struct {
	redis.Conn
	seen *observer
}

func (c observedConn) Do(cmd string, args ...any) (any, error) {
	reply, err := c.Conn.Do(cmd, args...)
	if err != nil && !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		if v := valueOf(cmd, args); v != "" {
			c.seen.mu.Lock()
			c.seen.errs[v]++
			c.seen.mu.Unlock()
		}
	}
	return reply, err
}

// valueOf is the lock value a command of redsync's carries: SET key value
// ..., EVAL(SHA) script 1 key value ...
func valueOf(cmd string, args []any) string {
	i := 1
	if strings.HasPrefix(strings.ToUpper(cmd), "EVAL") {
		i = 3
	}
	if len(args) > i {
		if s, ok := args[i].(string); ok {
			return s
		}
	}
	return ""
}
