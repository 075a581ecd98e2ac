package locks

import (
	"context"
	"errors"
	"sync"
	"time"
)

// holding is one lease a lock instance holds, with the watchdog that keeps
// it alive and the timer that declares it lost.
//
// Concurrency rule for the Lease it carries: every field but Deadline is
// fixed before Acquire returns it. Deadline is written only by the watchdog
// goroutine, after a successful renewal and just before it calls
// Events.Renewed. Read Deadline (a) inside Events.Renewed, (b) after Lost is
// closed, or (c) after Release returned: each of those happens after the
// last write. Right after Acquire returns, Deadline holds the acquire's
// deadline until the first renewal starts, TTL/3 later; a caller that reads
// it then and records it through the same synchronised sink as its
// Events.Renewing (as workloads do) is ordered before that renewal.
// Reading it at any other time while the watchdog runs is a data race.
type holding struct {
	lease *Lease

	// ops serialises this holding's Redis calls: renewals, re-entries and
	// releases. The watchdog holds it from Events.Renewing to
	// Events.Renewed, so no renewal overlaps a release.
	ops   sync.Mutex
	count int // how many times the instance holds it, under ops

	mu       sync.Mutex // guards the fields below
	deadline time.Time
	ended    bool // released or lost: the watchdog is done
	lost     chan struct{}
	expiry   *time.Timer
	// renewal fires the watchdog's next renewal; nil without a watchdog.
	// A timer rather than a goroutine per lease: most leases end before
	// their first renewal, and a release then costs no wakeup.
	renewal *time.Timer
}

// errRenewedTooLate reports a renewal that Redis accepted after the holder
// had already declared the lease lost: the key lives on in Redis, but the
// holder no longer counts on it, so the outcome is left unknown.
var errRenewedTooLate = errors.New("renewal answered after the lease was already given up as lost")

// newHolding starts the expiry timer of l and gives l its Lost channel.
func newHolding(l *Lease) *holding {
	hd := &holding{lease: l, count: 1, deadline: l.Deadline, lost: make(chan struct{})}
	l.Lost = hd.lost
	hd.mu.Lock()
	hd.expiry = time.AfterFunc(time.Until(l.Deadline), hd.expire)
	hd.mu.Unlock()
	return hd
}

// expire runs when the deadline timer fires: a deadline that no renewal
// moved means the lease is lost.
func (hd *holding) expire() {
	hd.mu.Lock()
	defer hd.mu.Unlock()
	if hd.ended {
		return
	}
	if left := time.Until(hd.deadline); left > 0 {
		hd.expiry.Reset(left)
		return
	}
	hd.endLocked(true)
}

// end stops the watchdog and the expiry timer; lost also closes Lost. Only
// the first call counts.
func (hd *holding) end(lost bool) {
	hd.mu.Lock()
	defer hd.mu.Unlock()
	hd.endLocked(lost)
}

func (hd *holding) endLocked(lost bool) {
	if hd.ended {
		return
	}
	hd.ended = true
	hd.expiry.Stop()
	if hd.renewal != nil {
		hd.renewal.Stop()
	}
	if lost {
		close(hd.lost)
	}
}

func (hd *holding) isEnded() bool {
	hd.mu.Lock()
	defer hd.mu.Unlock()
	return hd.ended
}

// watch starts the watchdog: it renews the lease every TTL/3 (sooner after
// a renewal with an unknown outcome) until the lease is released or lost.
// renew returns nil when the lease was extended by TTL, an error matching
// ErrNotHeld when the key is gone or another owner's, and any other error
// when the outcome is unknown.
func (hd *holding) watch(o Options, renew func(context.Context) error) {
	every := o.TTL / 3
	var tick func()
	tick = func() {
		next, more := hd.renewOnce(o, every, renew)
		if !more {
			return
		}
		hd.mu.Lock()
		defer hd.mu.Unlock()
		if !hd.ended {
			hd.renewal.Reset(next)
		}
	}
	hd.mu.Lock()
	defer hd.mu.Unlock()
	if !hd.ended {
		hd.renewal = time.AfterFunc(every, tick)
	}
}

// renewOnce sends one renewal and says when to send the next, and whether
// there is a next one.
func (hd *holding) renewOnce(o Options, every time.Duration, renew func(context.Context) error) (time.Duration, bool) {
	hd.ops.Lock()
	defer hd.ops.Unlock()
	hd.mu.Lock()
	if !hd.ended && !time.Now().Before(hd.deadline) {
		// The expiry timer is late; the deadline passed unrenewed all the same.
		hd.endLocked(true)
	}
	ended := hd.ended
	hd.mu.Unlock()
	if ended {
		return 0, false
	}

	if o.Events != nil {
		o.Events.Renewing(hd.lease)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	err := renew(ctx)
	cancel()
	hd.mu.Lock()
	switch {
	case hd.ended:
		if err == nil {
			err = errRenewedTooLate
		}
	case err == nil:
		hd.deadline = o.deadline(start)
		hd.lease.Deadline = hd.deadline
		hd.expiry.Reset(time.Until(hd.deadline))
	}
	hd.mu.Unlock()
	if o.Events != nil {
		o.Events.Renewed(hd.lease, err)
	}
	if errors.Is(err, ErrNotHeld) {
		hd.end(true)
		return 0, false
	}
	if hd.isEnded() {
		return 0, false
	}
	if err != nil {
		// Try again well before the deadline runs out.
		return every / 2, true
	}
	return max(every-time.Since(start), 0), true
}
