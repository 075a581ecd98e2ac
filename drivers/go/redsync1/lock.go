//go:build deadbolt_driver

package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-redsync/redsync"
	"github.com/gomodule/redigo/redis"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// lock keeps the *redsync.Mutex of each lease, as an application keeps the
// mutex it locked. It runs redsync v1 as its users do: over one redigo
// pool per independent master, the pool redigo's documentation builds
// (MaxIdle 3, IdleTimeout 240 s, redis.Dial with no timeouts), and
// NewMutex with the lease TTL as its expiry and redsync's own defaults
// (32 tries 500 ms apart, drift factor 0.01), unless a knob changes one.
// redsync v1 swallows every Redis error into a false (a failed Lock, a
// false Unlock or Extend), so the adapter reads each reply on the
// connections it lends the library (observer), changing none, and reports
// a call in which a command failed as unknown rather than as the no the
// library made of it.
type lock struct {
	rs    *redsync.Redsync
	pools []*redis.Pool
	o     locks.Options
	seen  *observer

	held locks.Held[*redsync.Mutex]
}

// The knobs: redigo's dial options and pool, redsync's mutex options.
const (
	connectTimeout = "connect_timeout"
	readTimeout    = "read_timeout"
	writeTimeout   = "write_timeout"
	maxIdle        = "max_idle"
	tries          = "tries"
	retryDelay     = "retry_delay"
	driftFactor    = "drift_factor"
)

func knobs() locks.Knobs {
	return locks.Knobs{
		{Name: connectTimeout, Kind: locks.KnobDuration, Default: "0s", From: locks.FromTimeout,
			Summary: "redigo DialConnectTimeout (0s: none, redigo's default)"},
		{Name: readTimeout, Kind: locks.KnobDuration, Default: "0s", From: locks.FromTimeout,
			Summary: "redigo DialReadTimeout: how long a command waits for its reply (0s: for ever, redigo's default)"},
		{Name: writeTimeout, Kind: locks.KnobDuration, Default: "0s", From: locks.FromTimeout,
			Summary: "redigo DialWriteTimeout (0s: none, redigo's default)"},
		{Name: maxIdle, Kind: locks.KnobInt, Default: "3",
			Summary: "redigo Pool.MaxIdle: idle connections kept (3 in redigo's documented pool)"},
		{Name: tries, Kind: locks.KnobInt, Default: "32", From: locks.FromTries,
			Summary: "redsync SetTries: how many times one Lock tries for a quorum"},
		{Name: retryDelay, Kind: locks.KnobDuration, Default: "500ms", From: locks.FromRetryDelay,
			Summary: "redsync SetRetryDelay: the wait between two tries"},
		{Name: driftFactor, Kind: locks.KnobFloat, Default: "0.01",
			Summary: "redsync SetDriftFactor: the share of the expiry taken off a grant's validity for clock drift"},
	}
}

func newLock(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	if e.Topology != endpoints.Independent {
		return nil, fmt.Errorf("lock redsync (v1) runs on independent masters: redigo has no Sentinel or cluster client")
	}
	if err := e.Check(); err != nil {
		return nil, err
	}
	s := o.Settings
	d := e.Dialer()
	seen := &observer{errs: map[string]int{}, sets: map[string]int{}}
	var pools []*redis.Pool
	var rp []redsync.Pool
	for _, addr := range e.Masters {
		dialOpts := []redis.DialOption{
			redis.DialNetDial(func(network, a string) (net.Conn, error) {
				ctx, cancel := context.WithCancel(context.Background())
				if t := s.Duration(connectTimeout); t > 0 {
					ctx, cancel = context.WithTimeout(context.Background(), t)
				}
				defer cancel()
				return d.Dial(ctx, network, a)
			}),
		}
		if t := s.Duration(readTimeout); t > 0 {
			dialOpts = append(dialOpts, redis.DialReadTimeout(t))
		}
		if t := s.Duration(writeTimeout); t > 0 {
			dialOpts = append(dialOpts, redis.DialWriteTimeout(t))
		}
		p := &redis.Pool{MaxIdle: s.Int(maxIdle), IdleTimeout: 240 * time.Second, Dial: func() (redis.Conn, error) {
			c, err := redis.Dial("tcp", addr, dialOpts...)
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

// Behaviour is redigo's (it sends every command once, and waits for a
// reply as long as the read timeout lets it, for ever by default), and
// the longest call: every try of a Lock waiting its delay, each of its
// commands stalled as long as one may be, or one Unlock or Extend.
func (l *lock) Behaviour() locks.Behaviour {
	s := l.o.Settings
	read, write := s.Duration(readTimeout), s.Duration(writeTimeout)
	b := locks.Behaviour{Client: "redigo " + client.ModuleVersion("github.com/gomodule/redigo"), CallTimeoutMS: locks.Millis(read), LongestCallMS: -1}
	if read > 0 && write > 0 {
		one := read + write
		// A try sends SET NX to each master in turn, and gives it back on
		// each when short of a quorum.
		n := time.Duration(len(l.pools))
		b.LongestCallMS = locks.Millis(time.Duration(s.Int(tries))*(s.Duration(retryDelay)+2*n*one) + n*one)
	}
	return b
}

func (l *lock) Close() error {
	var errs []error
	for _, p := range l.pools {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

func (l *lock) Acquire(ctx context.Context, key string) (*locks.Lease, error) {
	var value string
	s := l.o.Settings
	m := l.rs.NewMutex(key,
		redsync.SetExpiry(l.o.TTL),
		redsync.SetTries(s.Int(tries)),
		redsync.SetRetryDelay(s.Duration(retryDelay)),
		redsync.SetDriftFactor(s.Float(driftFactor)),
		redsync.SetGenValueFunc(func() (string, error) {
			b := make([]byte, 16)
			if _, err := rand.Read(b); err != nil {
				return "", err
			}
			value = base64.StdEncoding.EncodeToString(b)
			return value, nil
		}))
	start := time.Now()
	done := l.seen.acquire(ctx)
	err := m.Lock()
	done()
	failed := l.seen.take(value)
	if err == nil {
		lease := &locks.Lease{Key: key, Token: value, TTL: l.o.TTL, Deadline: l.deadline(start)}
		l.held.Put(lease, m)
		return lease, nil
	}
	took := l.seen.takeSets(value)
	switch {
	case failed > 0:
		return nil, locks.WithToken(fmt.Errorf("redsync: %w (%d of its commands failed; it says only that)", err, failed), value)
	case took == 0:
		// Every SET NX of every try was answered "not set": the key was
		// another's throughout.
		return nil, locks.WithToken(fmt.Errorf("%w: redsync: %w", locks.ErrNotAcquired, err), value)
	}
	// Some try took the key on a master (short of a quorum, or too late)
	// and gave it back.
	return nil, locks.WithToken(fmt.Errorf("%w: redsync: %w (%d SET NX took the key: %w)", locks.ErrNotAcquired, err, took, locks.ErrUndone), value)
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
	lease.Deadline = l.deadline(start)
	return nil
}

// deadline is redsync's validity of a grant whose try began at start.
func (l *lock) deadline(start time.Time) time.Time {
	return start.Add(l.o.TTL - time.Duration(float64(l.o.TTL)*l.o.Settings.Float(driftFactor)))
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
	// acquiring is the context of the acquire under way (nil: none), whose
	// tries rounds tells apart by the commands seen.
	acquiring context.Context
	rounds    locks.Rounds
	// sets counts, per lock value, the SET NX commands that took the key.
	sets map[string]int
}

// takeSets is how many SET NX commands of value took the key, forgotten.
func (o *observer) takeSets(value string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := o.sets[value]
	delete(o.sets, value)
	return n
}

// acquire marks the acquire under ctx as under way, until done.
func (o *observer) acquire(ctx context.Context) (done func()) {
	o.rounds.Reset()
	o.mu.Lock()
	o.acquiring = ctx
	o.mu.Unlock()
	return func() {
		o.mu.Lock()
		o.acquiring = nil
		o.mu.Unlock()
	}
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
	c.seen.mu.Lock()
	ctx := c.seen.acquiring
	c.seen.mu.Unlock()
	if ctx != nil {
		c.seen.rounds.Sent(ctx, strings.EqualFold(cmd, "SET") && slices.ContainsFunc(args, func(a any) bool { s, ok := a.(string); return ok && strings.EqualFold(s, "NX") }))
	}
	reply, err := c.Conn.Do(cmd, args...)
	if err == nil && reply == "OK" && strings.EqualFold(cmd, "SET") {
		if v := valueOf(cmd, args); v != "" {
			c.seen.mu.Lock()
			c.seen.sets[v]++
			c.seen.mu.Unlock()
		}
	}
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
