package broken

import (
	"context"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

func init() {
	locks.RegisterReentrant("reentrant-mute", "BROKEN: the reentrant lock whose watchdog keeps a loss to itself: a renewal that finds the key gone ends the watchdog, and the holder is never told", NewReentrantMute)
}

// ReentrantMute is the reentrant lock with its leases' Lost channel
// dropped: the watchdog still renews, and still stops when a renewal finds
// the key gone, but nothing tells the holder, which works on as if it held
// the lock. It is the auto-renewing wrapper that logs a failed renewal and
// carries on, a mistake found in many hand-rolled watchdogs.
type ReentrantMute struct{ locks.Lock }

// NewReentrantMute builds reentrant-mute over one master group.
func NewReentrantMute(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	l, err := locks.New("reentrant", e, o)
	if err != nil {
		return nil, err
	}
	return &ReentrantMute{l}, nil
}

func (m *ReentrantMute) Acquire(ctx context.Context, key string) (*locks.Lease, error) {
	l, err := m.Lock.Acquire(ctx, key)
	if l != nil {
		l.Lost = nil // the loss stays inside the lock
	}
	return l, err
}

func (m *ReentrantMute) Close() error { return locks.Close(m.Lock) }

// RenewsWhileHeld is the reentrant lock's: its watchdog renews on, mute.
func (m *ReentrantMute) RenewsWhileHeld() bool {
	r, ok := m.Lock.(locks.Renewer)
	return ok && r.RenewsWhileHeld()
}
