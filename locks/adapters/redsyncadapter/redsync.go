// Package redsyncadapter drives go-redsync/redsync v4 behind deadbolt's
// lock interface, as its users run it. It is a package of its own so that
// the in-tree lock redsync (deadbolt's own version) and the driver of
// redsync at any v4 version (drivers/go/redsync4) are this very adapter:
// built without tags it serves the newest API (go-redis v9, the timeout
// factor); the tags redsync4_goredis8 (up to v4.8.0) and
// redsync4_notimeoutfactor (up to v4.4.x) build the files of older ones.
package redsyncadapter

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/go-redsync/redsync/v4"
	"golang.org/x/mod/semver"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/locks/adapters/redsyncanswer"
)

// lock keeps the *redsync.Mutex of each lease, as an application keeps the
// mutex it locked: Unlock and Extend are that mutex's. It runs redsync as
// its README does: redsync.New over one pool per master group, on the
// go-redis client the README of the version builds (v8 until v4.8.0, v9
// from v4.8.1: client_goredis*.go), built from the endpoints' address,
// dialer and credentials and nothing else; NewMutex with the lease TTL as
// its expiry and redsync's own defaults (32 tries, its retry delay, drift
// factor 0.01, timeout factor 0.05 from v4.5.0) unless a knob changes one;
// Lock, Unlock and Extend with the context an application passes, one
// without a deadline. The value is redsync's own kind (16 random bytes,
// base64), made through WithGenValueFunc so that the lease carries it and
// a failed acquire says which it tried. The deadline is computed as
// redsync's validity is (not every v4 version exports Until). Its answers
// are read by redsyncanswer, as the in-tree adapter's are.
type lock struct {
	rs *redsync.Redsync
	c  *clients
	o  locks.Options

	held locks.Held[*redsync.Mutex]
}

// The knobs of redsync itself, beside its client's.
const (
	tries       = "tries"
	retryDelay  = "retry_delay"
	driftFactor = "drift_factor"
)

// Summary says what the lock is.
const Summary = "go-redsync/redsync/v4 unmodified over the go-redis its README builds (v8 to v4.8.0, v9 from v4.8.1), both at their defaults: one pool per master group (single instance on sentinel, Redlock on N masters), Extend"

// Module is redsync v4's module path.
const Module = "github.com/go-redsync/redsync/v4"

// Knobs are the client's, redsync's, and the timeout factor where the
// version has it.
func Knobs() locks.Knobs {
	return append(append(clientKnobs(),
		locks.Knob{Name: tries, Kind: locks.KnobInt, Default: "32", From: locks.FromTries,
			Summary: "redsync WithTries: how many times one Lock tries for a quorum"},
		locks.Knob{Name: retryDelay, Kind: locks.KnobDuration, Default: "0s", From: locks.FromRetryDelay,
			Summary: "redsync WithRetryDelay: a fixed wait between two tries (0s: redsync's own, 500 ms up to v4.2.x, a random 50-250 ms from v4.3.0)"},
		locks.Knob{Name: driftFactor, Kind: locks.KnobFloat, Default: "0.01",
			Summary: "redsync WithDriftFactor: the share of the expiry taken off a grant's validity for clock drift"}),
		timeoutFactorKnobs()...)
}

// New builds redsync over one pool per master group; nothing dials.
func New(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	if e.Topology == endpoints.Cluster {
		return nil, locks.IndependentMasters("redsync", e)
	}
	if e.Groups() < 1 {
		return nil, fmt.Errorf("lock redsync needs at least one master")
	}
	if err := e.Check(); err != nil {
		return nil, err
	}
	c := newClients(e, o.Settings)
	return &lock{rs: redsync.New(c.pools...), c: c, o: o}, nil
}

func (l *lock) Close() error { return l.c.close() }

// options are the mutex's: the expiry, and what the knobs changed.
func (l *lock) options(value *string) []redsync.Option {
	s := l.o.Settings
	opts := []redsync.Option{
		redsync.WithExpiry(l.o.TTL),
		redsync.WithGenValueFunc(func() (string, error) {
			b := make([]byte, 16)
			if _, err := rand.Read(b); err != nil {
				return "", err
			}
			*value = base64.StdEncoding.EncodeToString(b)
			return *value, nil
		}),
	}
	ks := Knobs()
	changed := func(name string) bool { k, _ := ks.Get(name); return s[name] != k.Default }
	if changed(tries) {
		opts = append(opts, redsync.WithTries(s.Int(tries)))
	}
	if changed(retryDelay) {
		opts = append(opts, redsync.WithRetryDelay(s.Duration(retryDelay)))
	}
	if changed(driftFactor) {
		opts = append(opts, redsync.WithDriftFactor(s.Float(driftFactor)))
	}
	return append(opts, timeoutFactorOptions(s, changed)...)
}

// Behaviour is the client's, and the longest call: every try of a Lock
// waiting its longest delay, its acquire round and its give-back each
// stalled as long as one command may be (cut at the try's own timeout
// where the context bounds a command), or one Unlock or Extend, whose
// context has no deadline.
func (l *lock) Behaviour() locks.Behaviour {
	b := l.c.behaviour()
	one, ok := l.c.longest()
	if !ok {
		b.LongestCallMS = -1
		return b
	}
	perTry := one
	if cut, ok := tryTimeout(l.o.TTL, l.o.Settings); ok && l.c.contextCuts {
		perTry = min(one, cut)
	}
	delay := 250 * time.Millisecond
	if d := l.o.Settings.Duration(retryDelay); d > 0 {
		delay = d
	} else if semver.Compare(client.ModuleVersion(Module), "v4.3.0") < 0 {
		delay = 500 * time.Millisecond
	}
	acquire := time.Duration(l.o.Settings.Int(tries)) * (delay + 2*perTry)
	b.LongestCallMS = locks.Millis(max(acquire, one))
	return b
}

func (l *lock) Acquire(ctx context.Context, key string) (*locks.Lease, error) {
	var value string
	m := l.rs.NewMutex(key, l.options(&value)...)
	start := time.Now()
	l.c.rounds.Reset()
	err := m.LockContext(ctx)
	if err == nil {
		lease := &locks.Lease{Key: key, Token: value, TTL: l.o.TTL, Deadline: deadline(start, l.o.TTL, l.o.Settings.Float(driftFactor))}
		l.held.Put(lease, m)
		return lease, nil
	}
	inTime := redsyncanswer.InTime(time.Since(start), l.o.TTL, l.o.Settings.Float(driftFactor))
	return nil, locks.WithToken(redsyncanswer.Acquire(err, ctx.Err(), len(l.c.pools), inTime), value)
}

// deadline is redsync's validity of a grant whose try began at start.
func deadline(start time.Time, ttl time.Duration, drift float64) time.Time {
	return start.Add(ttl - time.Duration(float64(ttl)*drift))
}

func (l *lock) Release(ctx context.Context, lease *locks.Lease) error {
	m, err := l.held.Get(lease, true, "redsync")
	if err != nil {
		return err
	}
	ok, err := m.UnlockContext(ctx)
	return redsyncanswer.Held("unlock", ok, err, len(l.c.pools))
}

// Extend is the mutex's ExtendContext; the deadline moves as an acquire's.
func (l *lock) Extend(ctx context.Context, lease *locks.Lease) error {
	m, err := l.held.Get(lease, false, "redsync")
	if err != nil {
		return err
	}
	start := time.Now()
	ok, err := m.ExtendContext(ctx)
	if err := redsyncanswer.Held("extend", ok, err, len(l.c.pools)); err != nil {
		return err
	}
	lease.Deadline = deadline(start, l.o.TTL, l.o.Settings.Float(driftFactor))
	return nil
}

// isSetNX reports a try's SET key value PX ms NX, as go-redis sends it.
func isSetNX(args []any) bool {
	if len(args) < 4 || fmt.Sprint(args[0]) != "set" {
		return false
	}
	for _, a := range args[3:] {
		if s, ok := a.(string); ok && strings.EqualFold(s, "nx") {
			return true
		}
	}
	return false
}
