package nemesis

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/workloads/moment"
)

// DefaultStrikes bounds a series of strikes inside operations when the
// step sets no bound.
const DefaultStrikes = 20

// A fault inside an operation strikes a request in flight a seeded delay
// after the harness wrote it. One delay lands in a window of the lock
// (between GET and DEL, between SETNX and EXPIRE) only with some chance, so
// a step strikes fresh requests one at a time until the history shows one
// did what the fault is for: a paused operation that took effect after its
// lease expired (checker.Strike.Late), or a killed one that left the key
// taken past its lease (Stuck). It gives up after its bound, or when the
// fault phase ends. The checker makes the run unknown unless some strike
// of the step hit (landed inside the operation, with the key seen held,
// and outlasted the lease): a lock that stays correct under every strike
// is judged on those.

func (s Step) strikes() int {
	if s.Strikes == 0 {
		return DefaultStrikes
	}
	return s.Strikes
}

// span is about how long a series of f takes when it strikes every time:
// each strike waits for a request (a TTL at most while holders finish),
// then a pause lasts its time, and a kill waits until the killed
// operation can no longer hold the key (a TTL) before the next request.
func (f inOp) span(s Step, ttl time.Duration) time.Duration {
	each := s.hold(ttl) + ttl
	if f.crash {
		each = 2 * ttl
	}
	return time.Duration(s.strikes()) * each
}

// series strikes step i's fault f inside fresh requests, one at a time,
// until one took effect late or left its key stuck, s.strikes() have
// struck, or the fault phase ends. A client:S target strikes slot S's
// requests (an acquire: S alone may ask for the key until it is struck,
// once nobody else holds it or asks for it); holder strikes any client's
// request for the key.
func (n *Plan) series(ctx context.Context, env Env, i int, s Step, last bool, f inOp, wg *sync.WaitGroup, errs chan<- error) error {
	if env.Clients == nil {
		return fmt.Errorf("%s strikes client requests, and the run has no clients", s.describe(i))
	}
	e := faults[s.Fault]
	sel := s.Target
	if sel == "" {
		sel = e.target
	}
	kind, arg, _ := strings.Cut(sel, ":")
	aim := moment.Aim{Op: f.op, Key: s.Key, Slot: AnySlot, Quiet: f.op == history.Acquire}
	if kind == "client" {
		aim.Slot = slotOf(env, arg)
	}
	gate := aim.Slot != AnySlot && aim.Key != "" && f.op == history.Acquire
	when := newDelays(env.Rng, s.strikes())
	struck := 0
	for struck < s.strikes() && ctx.Err() == nil {
		if gate {
			env.Clients.Admit(aim.Key, aim.Slot)
		}
		req, err := env.Clients.CatchSend(ctx, aim)
		if err != nil {
			if gate {
				env.Clients.Open(aim.Key)
			}
			break
		}
		a := &aimed{sending: req, kill: f.crash, delay: when.next(req.Latency)}
		t := Target{Process: req.Proc, Slot: req.Slot, aim: a,
			Name: fmt.Sprintf("%s in its %s of %s, %s after the request (latency %s)", processName(req.Process), req.Op, req.Lease, a.delay.Round(time.Microsecond), req.Latency.Round(time.Microsecond))}
		w := &window{rec: env.Rec, fault: s.Fault, node: t.Name, target: t.Selector(), key: req.Key, lease: req.Lease, aim: a}
		healed, err := n.inflict(ctx, env, i, s, false, e, t, w, wg, errs)
		if gate {
			env.Clients.Open(aim.Key)
		}
		struck++
		if err != nil {
			n.seriesOver(ctx, env, last)
			return err
		}
		<-healed
		// A killed acquire may still hold the key a TTL after it was last
		// heard of: a strike before then could not tell its own key apart.
		quiet := time.Now().Add(env.TTL + strikeSettle)
		if worst(ctx, env, w.id, f) {
			break
		}
		if f.crash {
			sleep(ctx, time.Until(quiet))
		}
	}
	if struck == 0 {
		n.missed(env, i, s, last, fmt.Sprintf("no %s of the aim (%s) was sent before the fault phase ended", f.op, describeAim(aim)))
		return nil
	}
	n.seriesOver(ctx, env, last)
	return nil
}

func describeAim(a moment.Aim) string {
	who := "any client"
	if a.Slot != AnySlot {
		who = fmt.Sprintf("client %d", a.Slot)
	}
	if a.Key == "" {
		return who + ", any key"
	}
	return fmt.Sprintf("%s, key %s", who, a.Key)
}

// seriesOver marks the heal and convergence once the series of the last
// step is over: its strikes healed as they went, so a pause's heal is
// already behind it (a fault still in effect from another step marks them
// when it heals).
func (n *Plan) seriesOver(ctx context.Context, env Env, last bool) {
	if !last {
		return
	}
	n.mu.Lock()
	n.lastStruck = true
	idle := n.active == 0
	n.mu.Unlock()
	if idle && n.healBegins(ctx) {
		env.Rec.Mark(history.PhaseHeal)
		env.Rec.Mark(history.PhaseConvergence)
	}
}

// strikeSettle is a margin for a killed client's last operation to be
// recorded after the kill.
const strikeSettle = 50 * time.Millisecond

// strikePoll is how often a crash's key is looked at while it may yet
// turn out stuck: reading the history costs, and nothing here is urgent.
const strikePoll = 50 * time.Millisecond

// worst waits until the history tells how strike id ended, and reports
// whether its operation took effect after its lease expired (a pause) or
// left its key taken past the lease (a crash): the most the fault can
// stage, after which its series stops.
func worst(ctx context.Context, env Env, id string, f inOp) bool {
	t := time.NewTicker(strikePoll)
	defer t.Stop()
	// A pause's operation completes within the client's reply timeout
	// once resumed; a crash's key is stuck at most 2 TTLs after the lease
	// ran out.
	giveUp := time.Now().Add(10 * time.Second)
	for time.Now().Before(giveUp) {
		st, ok := strikeOf(env.Rec.Ops(), id)
		switch {
		case !ok:
		case st.Late || st.Stuck:
			return true
		case !st.Inside && st.Complete:
			return false
		case !f.crash && st.Outcome != "":
			return false
		case f.crash && (st.Granted || (st.Expiry != checkerNever && env.Rec.Now() > st.Expiry+3*st.TTL)):
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return false
}

// checkerNever is checker's "never" for an expiry that never comes.
const checkerNever = 1<<63 - 1

// strikeOf judges strike id on the history so far.
func strikeOf(ops []history.Op, id string) (checker.Strike, bool) {
	in, err := checker.NewInput(ops)
	if err != nil {
		return checker.Strike{}, false
	}
	for _, s := range checker.Strikes(in) {
		if s.ID == id {
			return s, true
		}
	}
	return checker.Strike{}, false
}
