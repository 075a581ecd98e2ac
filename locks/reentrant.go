package locks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/endpoints"
)

func init() {
	RegisterReentrant("reentrant", "Redisson RLock: hash {owner: count} on one master, re-entrant per client, watchdog renews every TTL/3, waiters woken by an unlock message, Lost on loss", newHashFactory(reentrantKind, true))
	InDebate("reentrant", 3)
	RegisterReentrant("reentrant-lease", "reentrant without a watchdog: a fixed lease of TTL, Lost closed at the deadline", newHashFactory(reentrantKind, false))
}

// The reentrant and fair locks share everything but their scripts and
// where a waiter listens: both are a Redis hash {owner: hold count} with a
// TTL, owned by one lock instance (one client) at a time.
//
// Owner identity: each Lock instance is one client. While the instance
// holds a key, another Acquire of that key on the same instance re-enters:
// same owner token, same *Lease, the count in Redis goes up by one, and each
// Release takes one off. Once the instance holds nothing on the key, the next
// Acquire uses a fresh random owner token, so every lease has its own.
// Release of a lease this instance does not hold (another instance's, or an
// old one) is refused with ErrNotHeld without a call, as Redisson refuses an
// unlock from a thread that does not own the lock.

var (
	reentrantAcquireScript = script("reentrant_acquire.lua")
	reentrantReleaseScript = script("reentrant_release.lua")
	reentrantRenewScript   = script("reentrant_renew.lua")
)

// hashKind is what one hash lock algorithm brings: its scripts, its keys,
// and the channel its waiters listen on.
type hashKind struct {
	name             string
	acquire, release *redis.Script
	// leave takes a waiter that gave up out of the queue; nil when the
	// algorithm keeps no queue.
	leave *redis.Script
	// keys are the KEYS of every script of the algorithm, lock hash first.
	keys func(key string) []string
	// channelArg is the channel (or channel prefix) the scripts publish on.
	channelArg func(key string) string
	// channel is where the waiter owner listens.
	channel func(key, owner string) string
}

var reentrantKind = &hashKind{
	name:       "reentrant",
	acquire:    reentrantAcquireScript,
	release:    reentrantReleaseScript,
	keys:       func(key string) []string { return []string{key} },
	channelArg: unlockChannel,
	channel:    func(key, _ string) string { return unlockChannel(key) },
}

// unlockChannel is where a reentrant lock's release announces itself.
func unlockChannel(key string) string { return "deadbolt_lock__channel:{" + key + "}" }

// Acquire modes, as the scripts know them.
const (
	modeReenter = "reenter" // only the current owner may pass
	modeTry     = "try"     // take a free lock, never queue
	modeWait    = "wait"    // take a free lock or wait for it (fair: in line)
)

// Waiting bounds: a waiter looks again after the time the script said was
// worth waiting, but never sooner than minPoll (no spinning) and never later
// than one TTL (the unlock message may be lost).
const minPoll = 10 * time.Millisecond

// hashLock runs a hashKind for one client.
type hashLock struct {
	kind *hashKind
	rdb  redis.UniversalClient
	o    Options
	// watchdog renews leases until released; without it a lease is fixed.
	watchdog bool
	// patience is how long a fair waiter keeps its place in the queue
	// without looking again; a live waiter looks at least every TTL plus a
	// call timeout.
	patience time.Duration

	mu    sync.Mutex
	holds map[string]*holding
}

func newHashFactory(kind *hashKind, watchdog bool) Factory {
	return func(e endpoints.Endpoints, o Options) (Lock, error) {
		rdb, err := OneClient(kind.name, e, o)
		if err != nil {
			return nil, err
		}
		o = o.WithDefaults()
		return &hashLock{
			kind: kind, rdb: rdb, o: o, watchdog: watchdog,
			patience: 3 * (o.TTL + o.Timeout),
			holds:    map[string]*holding{},
		}, nil
	}
}

// Close closes the lock's connections.
func (h *hashLock) Close() error { return h.rdb.Close() }

// Queues: the fair kinds keep a line of waiters.
func (h *hashLock) Queues() bool { return h.kind.leave != nil }

// RenewsWhileHeld: the watchdog renews every TTL/3 (reentrant-lease has none).
func (h *hashLock) RenewsWhileHeld() bool { return h.watchdog }

// grant is an acquire script's answer.
type grant struct {
	ok         bool
	count, seq int64
	// wait is how long the script says is worth waiting before looking again.
	wait time.Duration
}

func (h *hashLock) Acquire(ctx context.Context, key string) (*Lease, error) {
	if hd := h.held(key); hd != nil {
		l, err, afresh := h.reenter(ctx, hd)
		if !afresh {
			return l, err
		}
	}
	return h.acquire(ctx, key)
}

// held is this instance's live holding of key, if any. A holding that
// ended (lost) is forgotten: the next acquire starts afresh.
func (h *hashLock) held(key string) *holding {
	h.mu.Lock()
	defer h.mu.Unlock()
	hd := h.holds[key]
	if hd != nil && hd.isEnded() {
		delete(h.holds, key)
		return nil
	}
	return hd
}

func (h *hashLock) forget(hd *holding) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.holds[hd.lease.Key] == hd {
		delete(h.holds, hd.lease.Key)
	}
}

// reenter takes the lock once more for the instance that holds it. afresh
// says the holding turned out to be gone and a fresh acquire should follow.
func (h *hashLock) reenter(ctx context.Context, hd *holding) (_ *Lease, _ error, afresh bool) {
	hd.ops.Lock()
	defer hd.ops.Unlock()
	if hd.isEnded() {
		return nil, nil, true
	}
	if err := ctx.Err(); err != nil {
		return nil, errors.Join(ErrNotAcquired, err), false
	}
	g, err := h.try(ctx, hd.lease.Key, hd.lease.Token, modeReenter)
	switch {
	case err != nil:
		// Unknown: the count in Redis may have gone up. The outermost
		// release deletes the whole hold, so no extra count outlives it.
		return nil, err, false
	case !g.ok:
		// Redis no longer has our owner: the lease is lost.
		hd.end(true)
		h.forget(hd)
		return nil, nil, true
	}
	hd.count++
	return hd.lease, nil, false
}

// acquire takes the lock with a fresh owner token, waiting up to Wait.
func (h *hashLock) acquire(ctx context.Context, key string) (*Lease, error) {
	owner := newToken()
	mode := modeTry
	if h.o.Wait > 0 {
		mode = modeWait
	}
	giveUp := time.Now().Add(h.o.Wait)
	var (
		subscribed, queued bool
		msgs               <-chan *redis.Message
	)
	for {
		if err := ctx.Err(); err != nil {
			// Nothing in flight, and the last try was refused.
			h.leave(ctx, key, owner, mode)
			return nil, errors.Join(ErrNotAcquired, err)
		}
		start := time.Now()
		g, err := h.try(ctx, key, owner, mode)
		switch {
		case err == nil && g.ok && ctx.Err() == nil:
			return h.hold(key, owner, g, start), nil
		case err != nil && Failed(err):
			h.leave(ctx, key, owner, mode)
			return nil, err
		case err != nil || g.ok:
			// The lock may be ours (unknown outcome), or is ours but the
			// caller has gone (ctx ended): leave nothing behind.
			undoErr := h.undo(ctx, key, owner, mode)
			if err == nil {
				err = fmt.Errorf("acquire took the lock after its context ended: %w", ctx.Err())
			}
			if undoErr != nil && !errors.Is(undoErr, ErrNotHeld) {
				err = fmt.Errorf("%w; undoing it: %v", err, undoErr)
			}
			return nil, err
		}
		if mode == modeWait && h.kind.leave != nil && !queued {
			// The refusal put us at the queue's tail.
			queued = true
			NoteQueued(ctx)
		}
		left := time.Until(giveUp)
		if mode == modeTry || left <= 0 {
			h.leave(ctx, key, owner, mode)
			return nil, ErrNotAcquired
		}
		if !subscribed {
			// Listen before looking again, or a release between the try
			// and the subscription would go unheard.
			subscribed = true
			sub, ch := h.subscribe(ctx, h.kind.channel(key, owner))
			if sub != nil {
				defer sub.Close()
			}
			msgs = ch
			continue
		}
		if err := wake(ctx, msgs, min(max(g.wait, minPoll), h.o.TTL, left)); err != nil {
			h.leave(ctx, key, owner, mode)
			return nil, errors.Join(ErrNotAcquired, err)
		}
	}
}

// wake waits for an unlock message or d, whichever comes first.
func wake(ctx context.Context, msgs <-chan *redis.Message, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-msgs:
	case <-t.C:
	}
	return nil
}

// subscribe listens on channel and waits for Redis to confirm. When that
// fails the waiter falls back to polling: msgs stays nil.
func (h *hashLock) subscribe(ctx context.Context, channel string) (*redis.PubSub, <-chan *redis.Message) {
	cctx, cancel := context.WithTimeout(ctx, h.o.Timeout)
	defer cancel()
	sub := h.rdb.Subscribe(cctx, channel)
	if _, err := sub.Receive(cctx); err != nil {
		sub.Close()
		return nil, nil
	}
	return sub, sub.Channel()
}

// try runs the acquire script once.
func (h *hashLock) try(ctx context.Context, key, owner, mode string) (grant, error) {
	cctx, cancel := context.WithTimeout(ctx, h.o.Timeout)
	defer cancel()
	res, err := h.kind.acquire.Run(cctx, h.rdb, h.kind.keys(key),
		owner, h.o.TTL.Milliseconds(), mode, h.patience.Milliseconds(), h.kind.channelArg(key)).Int64Slice()
	switch {
	case err != nil:
		return grant{}, AcquireResult(false, err)
	case len(res) < 2:
		return grant{}, fmt.Errorf("%s acquire script answered %v", h.kind.name, res)
	case res[0] == 1:
		g := grant{ok: true, count: res[1]}
		if len(res) > 2 {
			g.seq = res[2]
		}
		return g, nil
	}
	return grant{wait: time.Duration(res[1]) * time.Millisecond}, nil
}

// hold makes a granted fresh acquire this instance's holding, and starts
// its watchdog.
func (h *hashLock) hold(key, owner string, g grant, start time.Time) *Lease {
	l := &Lease{Key: key, Token: owner, Seq: g.seq, TTL: h.o.TTL, Deadline: h.o.deadline(start)}
	hd := newHolding(l)
	h.mu.Lock()
	h.holds[key] = hd
	h.mu.Unlock()
	if h.watchdog {
		hd.watch(h.o, func(ctx context.Context) error { return h.renew(ctx, key, owner) })
	}
	return l
}

// renew extends our hold by TTL when it is still ours.
func (h *hashLock) renew(ctx context.Context, key, owner string) error {
	return ownerChecked(ctx, h.rdb, h.o.Timeout, reentrantRenewScript, key, owner, h.o.TTL.Milliseconds())
}

// undo deletes whatever hold owner may have on key, and its place in line,
// after an acquire whose caller will never get the lease.
func (h *hashLock) undo(ctx context.Context, key, owner, mode string) error {
	ctx = context.WithoutCancel(ctx)
	_, err := h.releaseOnce(ctx, key, owner, true)
	h.leave(ctx, key, owner, mode)
	return err
}

// leave takes a waiter that gives up out of the queue, best effort.
func (h *hashLock) leave(ctx context.Context, key, owner, mode string) {
	if h.kind.leave == nil || mode != modeWait {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.o.Timeout)
	defer cancel()
	_ = h.kind.leave.Run(ctx, h.rdb, h.kind.keys(key), owner, h.kind.channelArg(key)).Err()
}

// releaseOnce runs the release script: one hold less, or all of them.
func (h *hashLock) releaseOnce(ctx context.Context, key, owner string, all bool) (remaining int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, h.o.Timeout)
	defer cancel()
	flag := "0"
	if all {
		flag = "1"
	}
	n, err := h.kind.release.Run(ctx, h.rdb, h.kind.keys(key), owner, h.o.TTL.Milliseconds(), flag, h.kind.channelArg(key)).Int64()
	if err := HeldResult(n >= 0, err); err != nil {
		return 0, err
	}
	return n, nil
}

// Release gives up one hold of l. The outermost release deletes the lock
// (whatever count Redis has for us, so that an acquire with an unknown
// outcome cannot leave a hold behind), stops the watchdog, and wakes the
// waiters.
func (h *hashLock) Release(ctx context.Context, l *Lease) error {
	h.mu.Lock()
	hd := h.holds[l.Key]
	h.mu.Unlock()
	if hd == nil || hd.lease.Token != l.Token {
		return fmt.Errorf("%w: this client does not hold %q as %s", ErrNotHeld, l.Key, l.Token)
	}
	hd.ops.Lock()
	defer hd.ops.Unlock()
	if hd.count <= 0 {
		return fmt.Errorf("%w: already released", ErrNotHeld)
	}
	final := hd.count == 1
	remaining, err := h.releaseOnce(ctx, l.Key, l.Token, final)
	switch {
	case errors.Is(err, ErrNotHeld):
		hd.count = 0
		hd.end(true)
		h.forget(hd)
	case errors.Is(err, ErrNoEffect):
		// Nothing changed: the caller may try again.
	case err != nil:
		// Unknown: go by the caller's intent. After the outermost release
		// the watchdog stops, so a hold that survived expires within TTL.
		hd.count--
		if final {
			hd.end(false)
			h.forget(hd)
		}
	default:
		hd.count--
		if final || remaining == 0 {
			hd.count = 0
			hd.end(false)
			h.forget(hd)
		}
	}
	return err
}
