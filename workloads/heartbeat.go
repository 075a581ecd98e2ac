package workloads

import (
	"context"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
)

func init() {
	for _, via := range []string{history.ViaExtend, history.ViaReacquire} {
		name, how := "heartbeat", "extends it"
		if via == history.ViaReacquire {
			name, how = "keepalive", "acquires it again through the same lock object"
		}
		Register(Kind{
			Name: name,
			Summary: "hold a key for several TTLs (the hold time), as a heartbeat does: read the key's counter, wait a third of the TTL, " +
				"ask the lock to go on (the holder " + how + "), and write the value + 1 only on its yes; stop on the first no",
			Checkers:  []string{"lost-updates"},
			Resource:  true,
			NeedsKeys: true,
			Calls:     []string{via},
			New: func(c Config) Workload {
				return &heartbeat{incrementer: newCounter(c).(*incrementer), via: via, period: c.TTL.D() / 3}
			},
		})
	}
}

// heartbeat is the counter held the way applications hold a lease longer
// than its TTL: each increment spans one call of the holder's on the
// lease (extend or reacquire), and is written only when the lock said the
// lease goes on, so a lock whose yes is false loses the increments of the
// client that took the key meanwhile. A no, an unknown outcome or a loss
// the lock reports ends the hold; a release follows as always.
type heartbeat struct {
	*incrementer
	via    string
	period time.Duration
}

func (w *heartbeat) Critical(_ context.Context, s *Session, l *Lease) {
	end := time.Now().Add(s.Work())
	for {
		read, ok := w.read1(s, l)
		if !ok {
			return
		}
		s.Hold(w.period, l)
		if gone(s, l) || s.Renew(l, w.via) != history.OK {
			return
		}
		w.write1(s, l, read)
		if !time.Now().Before(end) || gone(s, l) {
			return
		}
	}
}
