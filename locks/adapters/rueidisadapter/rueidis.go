// Package rueidisadapter drives redis/rueidis's rueidislock behind
// deadbolt's lock interface. It is a package of its own so that the driver
// of rueidislock at any version (drivers/go/rueidislock) compiles this very
// adapter against that version: it uses only what rueidis has had since
// v1.0.18.
package rueidisadapter

import (
	"context"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"
	"golang.org/x/mod/semver"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/locks/clients/rueidisclient"
)

// Summary says what the lock is.
const Summary = "redis/rueidis rueidislock unmodified over one master group, rueidis's own Sentinel client: SET NX PXAT, auto-extended every TTL/2, loss seen through client-side caching"

// Rueidis drives a rueidislock.Locker, built over its own rueidis client
// from the endpoints: rueidis's Sentinel client on the sentinel topology
// (it follows +switch-master itself), a single client on one independent
// master; every dial, Sentinel or master, goes through endpoints.Dialer.
//
// What rueidislock is, and how it maps:
//   - A lock on name is the key "rueidislock:<i>:<name>", i < 2*KeyMajority-1:
//     the majority is over keys, not nodes (with Redis Cluster they land on
//     different shards). On one master a majority of keys adds nothing, so
//     KeyMajority is 1, as its README asks for a single instance.
//   - Acquire is TryWithContext: SET NX PXAT in a script that also GETs the
//     key, so that client-side caching (CLIENT TRACKING) tells the holder
//     when the key changes. KeyValidity is the TTL; TryNextAfter, its bound
//     on each SET, is rueidislock's 20 ms unless try_next_after (or the
//     scenario's timeout_ms) says otherwise. The deadline is PXAT: the client's wall
//     clock, not the server's. Retries and Wait poll TryWithContext;
//     WithContext's wait on invalidations is not used, because its context
//     also bounds the lock it returns.
//   - The lock lives as long as the context it was taken under, and its key
//     validity is cut to that context's deadline: the adapter takes it under
//     a context that never ends, and ends it in Release.
//   - While held, rueidislock extends the key every KeyValidity/2 (or
//     extend_interval), and at
//     once when an invalidation arrives (including every connection loss,
//     such as a Sentinel switch). An extension that finds the key gone or
//     another's, or fails, ends the lock's context: the lease's Lost (after
//     a failed one it also deletes the key). The adapter sees those
//     extensions on the wire (the client it hands rueidislock through
//     ClientBuilder reads each command, changes none) and reports them as
//     renewals, so the harness's holding windows follow them. A script the
//     node does not have yet (NOSCRIPT: after a restart or a failover) is
//     sent again whole: the first attempt is a renewal with no effect.
//   - NoLoopTracking is set, as its README advises on Redis >= 7.0.5 (the
//     image runs 7.0.15). Without NOLOOP a holder's own extension (PEXPIREAT)
//     invalidates its own tracked key, and the invalidation triggers the next
//     extension: measured, 16,553 commands in 3 s of one hold with a 600 ms
//     validity, against 11 with NOLOOP.
//   - Release cancels the lock's context; rueidislock then deletes its key
//     (owner-checked) and returns nothing: the outcome is that delete's
//     reply as seen on the wire, ErrNotHeld when an extension had already
//     found the key gone (no delete is sent), unknown otherwise.
//   - rueidis sends a "retryable" command (rueidislock's scripts are) again
//     after a connection error, for as long as the call's context lasts,
//     unless disable_retry (from v1.0.70; before, rueidis retried only
//     read-only commands): a retried SET NX whose first attempt landed
//     reads as refused, and the harness, told which value the acquire
//     tried, reads the key back to see it.
//   - The locker is the one its README builds for a single instance
//     (KeyMajority 1, NoLoopTracking on Redis >= 7.0.5) over a client with
//     rueidis's defaults; the knobs change the client's (rueidisclient)
//     and try_next_after, extend_interval, no_loop_tracking.
//   - rueidis dials when a client is built, so the locker is built at the
//     first acquire (a factory does no I/O); a failure then is no effect.
//     SentinelOnDial (the reconnect mode) is refused: rueidis only follows
//     Sentinel's announcements.
type Rueidis struct {
	opt rueidislock.LockerOption
	o   locks.Options

	mu     sync.Mutex
	locker rueidislock.Locker
	held   map[string]*rueidisHold // by Redis key
	// tries is the latest acquire seen on the wire on each Redis key not held.
	tries map[string]rueidisTry
}

type rueidisTry struct {
	val, deadline string
	took, refused bool
	err           error
}

type rueidisHold struct {
	lease     *locks.Lease
	key, val  string
	cancel    context.CancelFunc
	releasing bool
	ended     error // the extension that ended the lock (ErrNotHeld: the key was gone)
	deleted   *error
}

// The knobs of rueidislock's LockerOption, beside the client's.
const (
	tryNextAfter   = "try_next_after"
	extendInterval = "extend_interval"
	noLoopTracking = "no_loop_tracking"
)

// Knobs are rueidis's client's and the locker's, with the defaults of the
// setup rueidislock's README builds for one instance.
func Knobs() locks.Knobs {
	return append(rueidisclient.Knobs(),
		locks.Knob{Name: tryNextAfter, Kind: locks.KnobDuration, Default: "20ms", From: locks.FromTimeout,
			Summary: "rueidislock TryNextAfter: how long an acquire waits for one key's SET before it gives up on that key"},
		locks.Knob{Name: extendInterval, Kind: locks.KnobDuration, Default: "0s",
			Summary: "rueidislock ExtendInterval: how often a held lock is extended (0s: rueidislock's default, half the validity)"},
		locks.Knob{Name: noLoopTracking, Kind: locks.KnobBool, Default: "true",
			Summary: "rueidislock NoLoopTracking: CLIENT TRACKING with NOLOOP (its README sets it for Redis >= 7.0.5)"})
}

// New checks the endpoints and prepares the locker; nothing dials.
func New(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	if n := e.Groups(); n != 1 {
		return nil, fmt.Errorf("lock rueidis needs one master group, the topology has %d", n)
	}
	if err := e.Check(); err != nil {
		return nil, err
	}
	if o.Conn.SentinelOnDial {
		return nil, fmt.Errorf("lock rueidis follows Sentinel's +switch-master only: it has no reconnect mode")
	}
	if e.Topology == endpoints.Cluster {
		// Its wire observer, which turns auto-extensions into renewals,
		// reads one node's connection; rueidis's cluster client has many.
		return nil, fmt.Errorf("lock rueidis is not adapted to the cluster topology yet")
	}
	o = o.WithDefaults()
	d := e.Dialer()
	// DialFn, not the later DialCtxFn: rueidis has had it since v1.0.18.
	dial := func(addr string, nd *net.Dialer, _ *tls.Config) (net.Conn, error) {
		ctx, cancel := context.WithCancel(context.Background())
		if nd.Timeout > 0 { // as net.Dialer's: 0 is no timeout (a Sentinel's dialer, unless set)
			ctx, cancel = context.WithTimeout(context.Background(), nd.Timeout)
		}
		defer cancel()
		return d.Dial(ctx, "tcp", addr)
	}
	co := rueidis.ClientOption{DialFn: dial, Username: e.Username, Password: e.Password}
	rueidisclient.Apply(&co, o.Settings)
	if e.Topology == endpoints.Sentinel {
		co.InitAddress = e.Sentinels
		co.Sentinel = rueidis.SentinelOption{MasterSet: e.MasterName, Dialer: co.Dialer,
			Username: e.SentinelUsername, Password: e.SentinelPassword}
	} else {
		co.InitAddress, co.ForceSingleClient = e.Masters, true
	}
	r := &Rueidis{o: o, held: map[string]*rueidisHold{}, tries: map[string]rueidisTry{}}
	r.opt = rueidislock.LockerOption{ClientOption: co, KeyMajority: 1, KeyValidity: o.TTL,
		TryNextAfter: o.Settings.Duration(tryNextAfter), ExtendInterval: o.Settings.Duration(extendInterval),
		NoLoopTracking: o.Settings.Bool(noLoopTracking),
		ClientBuilder: func(co rueidis.ClientOption) (rueidis.Client, error) {
			c, err := rueidis.NewClient(co)
			return wire{Client: c, r: r}, err
		}}
	return r, nil
}

func (r *Rueidis) open() (rueidislock.Locker, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.locker == nil {
		lk, err := rueidislock.NewLocker(r.opt)
		if err != nil {
			return nil, err
		}
		r.locker = lk
	}
	return r.locker, nil
}

// redisKey is rueidislock's first (and, with KeyMajority 1, only) key of name.
func redisKey(name string) string { return "rueidislock:0:" + name }

func (r *Rueidis) Acquire(ctx context.Context, key string) (*locks.Lease, error) {
	lk, err := r.open()
	if err != nil {
		return nil, errors.Join(locks.ErrNoEffect, fmt.Errorf("rueidis: build the client: %w", err))
	}
	return r.o.Retry(ctx, func() (*locks.Lease, error) { return r.try(ctx, lk, key) })
}

func (r *Rueidis) try(ctx context.Context, lk rueidislock.Locker, key string) (*locks.Lease, error) {
	lctx, cancel, err := lk.TryWithContext(context.WithoutCancel(ctx), key)
	r.mu.Lock()
	t := r.tries[redisKey(key)]
	delete(r.tries, redisKey(key))
	r.mu.Unlock()
	switch {
	case err == nil && !t.took:
		cancel() // waits for rueidislock's delete, seen on the wire: not under r.mu
		return nil, fmt.Errorf("rueidis: rueidislock holds %q, but its SET was not seen on the wire", key)
	case err == nil:
	case t.refused:
		return nil, fmt.Errorf("%w: rueidis: %w", locks.ErrNotAcquired, err)
	case !t.took && locks.Classify(t.err) == locks.NoEffect:
		return nil, errors.Join(locks.ErrNotAcquired, fmt.Errorf("rueidis: %w", err))
	default:
		return nil, fmt.Errorf("rueidis: %w", err)
	}
	ms, _ := strconv.ParseInt(t.deadline, 10, 64)
	lost := make(chan struct{})
	l := &locks.Lease{Key: key, Token: hex.EncodeToString([]byte(t.val)), TTL: r.o.TTL, Deadline: time.UnixMilli(ms), Lost: lost}
	h := &rueidisHold{lease: l, key: redisKey(key), val: t.val, cancel: cancel}
	r.mu.Lock()
	r.held[h.key] = h
	r.mu.Unlock()
	go func() {
		<-lctx.Done()
		r.mu.Lock()
		defer r.mu.Unlock()
		if !h.releasing {
			close(lost)
		}
	}()
	return l, nil
}

func (r *Rueidis) Release(ctx context.Context, l *locks.Lease) error {
	r.mu.Lock()
	h := r.held[redisKey(l.Key)]
	if h == nil || h.lease != l {
		r.mu.Unlock()
		return fmt.Errorf("%w: rueidis: no lock of this client on %q with token %q", locks.ErrNotHeld, l.Key, l.Token)
	}
	h.releasing = true
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { h.cancel(); close(done) }() // waits for rueidislock's delete
	select {
	case <-done:
	case <-time.After(r.deleteWait()):
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.held, h.key)
	switch {
	case h.deleted != nil && *h.deleted != nil && locks.Classify(*h.deleted) == locks.NoEffect:
		return errors.Join(locks.ErrNoEffect, *h.deleted)
	case h.deleted != nil && *h.deleted != nil:
		return fmt.Errorf("rueidis: delete: %w", *h.deleted)
	case h.deleted != nil:
		return nil
	case errors.Is(h.ended, locks.ErrNotHeld):
		return fmt.Errorf("%w: rueidis: an extension had found the key gone", locks.ErrNotHeld)
	case h.ended != nil:
		return fmt.Errorf("rueidis: gave the lock up after an extension failed (%w); its delete's outcome is unknown", h.ended)
	}
	return fmt.Errorf("rueidis: no delete answered within %s", r.deleteWait())
}

// scriptsRetryable reports whether rueidis at version sends rueidislock's
// scripts again after a connection error: up to v1.0.68 rueidis retries
// read-only commands only, from v1.0.69 the commands marked retryable,
// and from v1.0.70 rueidislock marks its scripts so (NewLuaScriptRetryable;
// client.go and rueidislock/lock.go at those versions). A version the
// build does not name is taken at the newest's word.
func scriptsRetryable(version string) bool {
	return !semver.IsValid(version) || semver.Compare(version, "v1.0.70") >= 0
}

// deleteWait is how long a release waits to see rueidislock's delete: as
// long as rueidis waits for a connection's answer, and a backoff more.
func (r *Rueidis) deleteWait() time.Duration {
	return rueidisclient.ConnWrite(r.opt.ClientOption) + time.Second
}

// Behaviour is the client's, with the renewals rueidislock makes and the
// longest call: an acquire's tries, each bounded by TryNextAfter, or a
// release waiting for the delete.
func (r *Rueidis) Behaviour() locks.Behaviour {
	b := rueidisclient.Behaviour(r.opt.ClientOption, scriptsRetryable(rueidisclient.Version()))
	every := r.opt.ExtendInterval
	if every <= 0 {
		every = r.opt.KeyValidity / 2
	}
	b.RenewEveryMS = locks.Millis(every)
	tries := time.Duration(r.o.Retries + 1)
	acquire := tries*(r.opt.TryNextAfter+r.o.RetryDelay) + r.o.Wait
	b.LongestCallMS = locks.Millis(max(acquire, r.deleteWait()))
	return b
}

// Close closes the locker and its client.
// RenewsWhileHeld: rueidislock extends every lock it holds at half its
// validity, on its own.
func (r *Rueidis) RenewsWhileHeld() bool { return true }

func (r *Rueidis) Close() error {
	r.mu.Lock()
	lk := r.locker
	r.mu.Unlock()
	if lk != nil {
		lk.Close()
	}
	return nil
}

// tried records an acquire seen on the wire (r.mu held): the first call
// of an acquire on key with val; a second is its undo.
func (r *Rueidis) tried(key, val, deadline string, err error) {
	if t := r.tries[key]; t.val != val {
		r.tries[key] = rueidisTry{val: val, deadline: deadline, took: err == nil, refused: rueidis.IsRedisNil(err), err: err}
	}
}

// DoMulti is how rueidislock before v1.0.2x acquires: SET key val NX PXAT
// deadline beside a GET (for client-side caching), not a script.
func (w wire) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	var sets [][]string
	for _, cmd := range multi {
		sets = append(sets, slices.Clone(cmd.Commands())) // rueidis reuses a command's words once it ran
	}
	res := w.Client.DoMulti(ctx, multi...)
	for i, args := range sets {
		if len(args) == 6 && args[0] == "SET" && args[3] == "NX" && args[4] == "PXAT" && i < len(res) {
			w.r.mu.Lock()
			if h := w.r.held[args[1]]; h == nil {
				w.r.tried(args[1], args[2], args[5], res[i].Error())
			}
			w.r.mu.Unlock()
		}
	}
	return res
}

// wire is the client rueidislock runs on: rueidis's own, reading each
// script call on one of this adapter's keys (EVAL or EVALSHA, one key, the
// owner value and a deadline) to tell acquires, extensions and deletes.
type wire struct {
	rueidis.Client
	r *Rueidis
}

const (
	seenAcquire = iota
	seenExtension
	seenDelete
)

func (w wire) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	args := cmd.Commands()
	if len(args) != 6 || (args[0] != "EVALSHA" && args[0] != "EVAL") || args[2] != "1" {
		return w.Client.Do(ctx, cmd)
	}
	key, val, deadline := args[3], args[4], args[5]
	r := w.r
	r.mu.Lock()
	h, seen := r.held[key], seenAcquire
	switch {
	case h == nil || h.val != val:
		h = nil
	case h.releasing:
		seen = seenDelete
	case h.ended != nil:
		seen = -1 // rueidislock's own delete after a failed extension
	default:
		seen = seenExtension
	}
	r.mu.Unlock()
	if seen == seenExtension && r.o.Events != nil {
		r.o.Events.Renewing(h.lease)
	}
	res := w.Client.Do(ctx, cmd)
	n, err := res.AsInt64()
	if re, ok := rueidis.IsRedisErr(res.Error()); ok && re.IsNoScript() {
		// Not run: rueidis sends the script itself next, seen afresh.
		if seen == seenExtension && r.o.Events != nil {
			r.o.Events.Renewed(h.lease, errors.Join(locks.ErrNoEffect, re))
		}
		return res
	}
	r.mu.Lock()
	switch seen {
	case seenAcquire:
		r.tried(key, val, deadline, res.Error())
	case seenDelete:
		if err == nil && n == 0 {
			err = locks.ErrNotHeld
		}
		h.deleted = &err
	case seenExtension:
		switch {
		case err == nil && n == 1:
			ms, _ := strconv.ParseInt(deadline, 10, 64)
			h.lease.Deadline = time.UnixMilli(ms)
		case err == nil:
			err = locks.ErrNotHeld
			fallthrough
		default:
			h.ended = err
		}
	}
	r.mu.Unlock()
	if seen == seenExtension && r.o.Events != nil {
		r.o.Events.Renewed(h.lease, err)
	}
	return res
}
