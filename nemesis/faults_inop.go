package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/workloads/moment"
)

// The faults struck inside a client's lock operation with no help from the
// lock: the harness stops (or kills) the client a seeded delay after it
// wrote an acquire or release request, the delay drawn over that client's
// recent latency for the operation, so that the stop lands between the
// lock's round trips, whatever language or library the client runs. A plan
// step of one strikes fresh requests until one did what the fault is for
// (strikes.go).
func init() {
	for op, request := range map[history.F]string{history.Acquire: "an acquire", history.Release: "a release"} {
		RegisterFault(FaultDecl{Name: "pause-in-" + string(op), Effects: Effects{OnClients: true, Stops: true}, Target: "holder", Fault: inOp{op: op}, Summary: fmt.Sprintf("SIGSTOP a client a seeded delay (over its recent latency) after the harness sent it %s request, SIGCONT at the heal: a pause between the lock's round trips, with no help from the lock", request)})
		RegisterFault(FaultDecl{Name: "crash-in-" + string(op), Effects: Effects{OnClients: true, Kills: true, Instant: true}, Target: "holder", Fault: inOp{op: op, crash: true}, Summary: fmt.Sprintf("SIGKILL a client a seeded delay (over its recent latency) after the harness sent it %s request: a crash between the lock's round trips, with no help from the lock", request)})
	}
	// The holder's own renewal: an extend or reacquire in flight across
	// the lease's expiry, whose yes (if it says one) arrives after it.
	RegisterFault(FaultDecl{Name: "pause-in-extend", Effects: Effects{OnClients: true, Stops: true}, Target: "holder", Fault: inOp{op: history.Renew}, Summary: "SIGSTOP a client a seeded delay (over its recent latency) after the harness sent it an extend (or reacquire) of the lease it holds, SIGCONT at the heal: its reply read after the lease it asked for ran out, with no help from the lock"})
}

// delaySpread stretches the delays a little past the latency: a reply
// read late still leaves the lock's last round trip inside the range.
const delaySpread = 1.25

// delays draws a series' delays over [0, delaySpread x latency),
// stratified: the range is cut into as many slices as the series may
// strike, each strike takes a slice not yet taken (in a seeded order) and
// a seeded point in it, so that a series covers the whole operation
// rather than clustering by chance.
type delays struct {
	rng   *rand.Rand
	n     int
	order []int // the slices not yet taken
}

func newDelays(rng *rand.Rand, n int) *delays { return &delays{rng: rng, n: max(n, 1)} }

// next is the next strike's delay for an operation of latency lat; after
// n strikes the slices are dealt again.
func (d *delays) next(lat time.Duration) time.Duration {
	if len(d.order) == 0 {
		d.order = d.rng.Perm(d.n)
	}
	slice := d.order[0]
	d.order = d.order[1:]
	return time.Duration((float64(slice) + d.rng.Float64()) / float64(d.n) * delaySpread * float64(lat))
}

// inOp is a fault struck inside one operation op of a client: a pause, or
// a crash.
type inOp struct {
	op    history.F
	crash bool
}

// aimed is a request in flight that a fault strikes inside: the signal
// goes delay after the request's write. As the fault strikes and heals it
// learns when the signal really went and whether the request was still
// outstanding then.
type aimed struct {
	sending *moment.Sending
	delay   time.Duration
	kill    bool
	sent    time.Duration
	inside  bool
}

// record is how the history shows the aim on op, a fault-start or
// fault-end, invoked or completed (history.InOp).
func (a *aimed) record(op history.Op) *history.InOp {
	r := &history.InOp{Op: a.sending.Op, Kill: a.kill}
	switch {
	case op.F == history.FaultStart && op.Type == history.Invoke:
		r.Delay, r.Latency = int64(a.delay), int64(a.sending.Latency)
	case op.F == history.FaultStart:
		r.Delay = int64(a.sent)
	case op.Type != history.Invoke:
		r.Inside = a.inside
	}
	return r
}

func (f inOp) Inject(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
	a := t.aim
	if a == nil || t.Process == nil {
		return nil, fmt.Errorf("a fault inside a client's %s strikes a request in flight, which only a plan step finds, not %q", f.op, t.Name)
	}
	p, id := t.Process, a.sending.ID
	waitUntil(a.sending.At.Add(a.delay))
	a.sent = time.Since(a.sending.At)
	if f.crash {
		p.Kill() // returns once reaped: everything it wrote has been read
		a.inside = !p.Answered(id)
		return nil, nil
	}
	err := p.Pause()
	answered := p.Answered(id)
	return func(ctx context.Context) error {
		// Stopped all along, it wrote nothing since the stop: a reply still
		// unread now was written after it, or not at all, once nothing it
		// wrote waits in the pipe.
		a.inside = err == nil && !answered && drained(ctx, p) && !p.Answered(id)
		return p.Resume()
	}, err
}

// drained waits (a second at most) until nothing the stopped client wrote
// waits unread in its pipe.
func drained(ctx context.Context, p interface{ Unread() int }) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		switch p.Unread() {
		case 0:
			return true
		case -1:
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}

// waitUntil returns at t: it sleeps to a millisecond before, then spins,
// since a sleep may wake up to a millisecond late and the windows inside a
// lock are a fraction of one.
func waitUntil(t time.Time) {
	if d := time.Until(t) - time.Millisecond; d > 0 {
		time.Sleep(d)
	}
	for time.Now().Before(t) {
	}
}
