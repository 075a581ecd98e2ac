// Package broken holds known-unsafe lock variants, kept to prove that the
// checkers catch what they break. Each one is a common mistake seen in the
// wild, registered under its own name:
//
//   - setnx-expire: SETNX, then PEXPIRE as a second command. A client that
//     dies between the two leaves a lock that never expires.
//   - del-no-owner: SET NX PX, released with a plain DEL. A holder whose
//     lease expired deletes the next holder's lock.
//   - get-then-del: SET NX PX, released by GET (is it still my token?) then
//     DEL as two commands. The lease can expire and pass to another client
//     between them, and the DEL removes that client's lock.
//   - no-ttl: SET NX with no expiry at all. A holder that crashes blocks the
//     key forever.
//   - fence-late: SET NX PX, then INCR for the fencing token as a second
//     command. A holder stalled between them draws its token after the
//     next holder's (fence_late.go).
//   - fair-barging: the fair lock, but a free lock goes to whoever asks
//     first, in line or not. Mutual exclusion holds; the queue's order
//     does not (fair_barging.go).
//   - reentrant-mute: the reentrant lock whose watchdog keeps a loss to
//     itself: a refused renewal never reaches the holder, who works on
//     (reentrant_mute.go).
//
// Every variant declares the named point inside the window it leaves open
// and calls Options.At there, so that a test or a scenario can stall or
// crash a client exactly inside it. Never use these locks for anything but
// tests.
package broken

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// The named points, one per variant, inside the window it leaves open.
const (
	AfterSetnx = "after-setnx" // setnx-expire: after SETNX, before PEXPIRE
	BeforeDel  = "before-del"  // del-no-owner: before the DEL of a release
	AfterGet   = "after-get"   // get-then-del: after the GET saw our token, before DEL
	AfterSet   = "after-set"   // no-ttl: after the SET, before Acquire returns
)

func init() {
	locks.Register("setnx-expire", "BROKEN: SETNX then PEXPIRE as two commands; a crash between them leaves a lock without expiry", NewSetnxExpire, AfterSetnx)
	locks.Register("del-no-owner", "BROKEN: SET NX PX, released with a plain DEL that removes whoever holds it", NewDelNoOwner, BeforeDel)
	locks.Register("get-then-del", "BROKEN: SET NX PX, released by GET (owner check) then DEL as two commands", NewGetThenDel, AfterGet)
	locks.Register("no-ttl", "BROKEN: SET NX without expiry; a crashed holder blocks the key forever", NewNoTTL, AfterSet)
}

// NoTTLValidity is the validity deadline a no-ttl lease gets (acquire
// invoke time + NoTTLValidity): the key never expires, so the lease lasts
// until its release; an hour is "forever" for any run while keeping
// timelines finite.
const NoTTLValidity = time.Hour

// base is what every variant shares: one master, options, and the correct
// owner-checked release of the simple lock for the variants whose release
// is not what they break.
type base struct {
	rdb    redis.UniversalClient
	o      locks.Options
	simple locks.Lock
}

func newBase(name string, e endpoints.Endpoints, o locks.Options) (base, error) {
	o = o.WithDefaults()
	rdb, err := locks.OneClient(name, e, o)
	if err != nil {
		return base{}, err
	}
	simple, err := locks.NewSimple(e, o)
	if err != nil {
		rdb.Close()
		return base{}, err
	}
	return base{rdb: rdb, o: o, simple: simple}, nil
}

// Close closes the variant's connections and its simple release's.
func (b *base) Close() error { return errors.Join(b.rdb.Close(), locks.Close(b.simple)) }

func (b *base) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, b.o.Timeout)
}

// setNX is the first command of the variants that take the lock with one
// SET NX: with PX ttl, or with no expiry at all when ttl is 0.
func (b *base) setNX(ctx context.Context, key string, ttl time.Duration) (*locks.Lease, error) {
	token := newToken()
	start := time.Now()
	cctx, cancel := b.call(ctx)
	defer cancel()
	if err := locks.AcquireResult(b.rdb.SetNX(cctx, key, token, ttl).Result()); err != nil {
		return nil, err
	}
	deadline := b.o.Deadline(start)
	if ttl == 0 {
		deadline = start.Add(NoTTLValidity)
	}
	return &locks.Lease{Key: key, Token: token, TTL: ttl, Deadline: deadline}, nil
}

// SetnxExpire takes the lock with SETNX and gives it its TTL with a second
// command, PEXPIRE.
type SetnxExpire struct{ base }

// NewSetnxExpire builds setnx-expire over one master group.
func NewSetnxExpire(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	b, err := newBase("setnx-expire", e, o)
	return &SetnxExpire{b}, err
}

func (s *SetnxExpire) Acquire(ctx context.Context, key string) (*locks.Lease, error) {
	token := newToken()
	start := time.Now()
	cctx, cancel := s.call(ctx)
	defer cancel()
	// go-redis sends SETNX for a zero expiration.
	if err := locks.AcquireResult(s.rdb.SetNX(cctx, key, token, 0).Result()); err != nil {
		return nil, err
	}
	if err := s.o.Point(ctx, AfterSetnx, key); err != nil {
		return nil, fmt.Errorf("setnx-expire: after SETNX, before PEXPIRE: %w", err)
	}
	pctx, pcancel := s.call(ctx)
	defer pcancel()
	if err := s.rdb.PExpire(pctx, key, s.o.TTL).Err(); err != nil {
		// The key is ours, maybe without expiry: the outcome is unknown.
		return nil, fmt.Errorf("setnx-expire: PEXPIRE after SETNX: %w", err)
	}
	return &locks.Lease{Key: key, Token: token, TTL: s.o.TTL, Deadline: s.o.Deadline(start)}, nil
}

func (s *SetnxExpire) Release(ctx context.Context, l *locks.Lease) error {
	return s.simple.Release(ctx, l)
}

// DelNoOwner is SET NX PX released with a plain DEL.
type DelNoOwner struct{ base }

// NewDelNoOwner builds del-no-owner over one master group.
func NewDelNoOwner(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	b, err := newBase("del-no-owner", e, o)
	return &DelNoOwner{b}, err
}

func (d *DelNoOwner) Acquire(ctx context.Context, key string) (*locks.Lease, error) {
	return d.setNX(ctx, key, d.o.TTL)
}

// Release deletes the key whoever holds it. It reports ErrNotHeld only when
// the key was gone; when another client held it, that client lost it.
func (d *DelNoOwner) Release(ctx context.Context, l *locks.Lease) error {
	if err := d.o.Point(ctx, BeforeDel, l.Key); err != nil {
		return fmt.Errorf("del-no-owner: before DEL: %w", err)
	}
	cctx, cancel := d.call(ctx)
	defer cancel()
	n, err := d.rdb.Del(cctx, l.Key).Result()
	return locks.HeldResult(n != 0, err)
}

// GetThenDel is SET NX PX released by GET, then, when the token is ours,
// DEL: the owner check and the delete are not atomic.
type GetThenDel struct{ base }

// NewGetThenDel builds get-then-del over one master group.
func NewGetThenDel(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	b, err := newBase("get-then-del", e, o)
	return &GetThenDel{b}, err
}

func (g *GetThenDel) Acquire(ctx context.Context, key string) (*locks.Lease, error) {
	return g.setNX(ctx, key, g.o.TTL)
}

func (g *GetThenDel) Release(ctx context.Context, l *locks.Lease) error {
	cctx, cancel := g.call(ctx)
	defer cancel()
	v, err := g.rdb.Get(cctx, l.Key).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return locks.ErrNotHeld
	case err != nil:
		// Whatever became of the GET, no DEL follows: no effect.
		return errors.Join(locks.ErrNoEffect, err)
	case v != l.Token:
		return locks.ErrNotHeld
	}
	if err := g.o.Point(ctx, AfterGet, l.Key); err != nil {
		return fmt.Errorf("get-then-del: after GET, before DEL: %w", err)
	}
	dctx, dcancel := g.call(ctx)
	defer dcancel()
	n, err := g.rdb.Del(dctx, l.Key).Result()
	return locks.HeldResult(n != 0, err)
}

// NoTTL is SET NX without any expiry.
type NoTTL struct{ base }

// NewNoTTL builds no-ttl over one master group.
func NewNoTTL(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	b, err := newBase("no-ttl", e, o)
	return &NoTTL{b}, err
}

func (n *NoTTL) Acquire(ctx context.Context, key string) (*locks.Lease, error) {
	l, err := n.setNX(ctx, key, 0)
	if err != nil {
		return nil, err
	}
	if err := n.o.Point(ctx, AfterSet, key); err != nil {
		return nil, fmt.Errorf("no-ttl: after SET: %w", err)
	}
	return l, nil
}

func (n *NoTTL) Release(ctx context.Context, l *locks.Lease) error {
	return n.simple.Release(ctx, l)
}

func newToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
