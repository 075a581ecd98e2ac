package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/workloads/moment"
)

// Session is one client slot: a loop of lock, work, release, run by one
// client process at a time. A process that hangs, dies or breaks the
// protocol is killed and replaced by a new one under a new history process
// id; an operation its own driver reports as unknown also moves the session
// to a new history process id (on the same OS process), because the old
// operation may still take effect at any later time.
type Session struct {
	r    *Runner
	slot int
	rng  *rand.Rand
	stop <-chan struct{}
	ctx  context.Context

	mu      sync.Mutex // guards what the event goroutine reads
	proc    *client.Process
	process int
	grants  int
	leases  map[string]*Lease
	// busy is open while a request of the session's is in flight, and
	// closed once its completion is recorded (see Runner.Quiet).
	busy chan struct{}
	// inflight is the operation whose request is out, sentAt when it was
	// written, aimed whether a fault took it (sends.go).
	inflight *history.Op
	sentAt   time.Time
	aimed    bool
}

// Lease is one grant as the harness names and knows it. The lock's token
// and fencing token ride along for the release and the resource, and are
// recorded; nothing else trusts them.
type Lease struct {
	ID    string
	Key   string
	Token string
	Fence int64

	lost     chan struct{}
	lostOnce sync.Once
	// watchdog is the history process of the lease's renewals, -1 until
	// the first; an unknown renewal moves it on.
	watchdog int
}

// Lost is closed when the client's lock reported the lease lost.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Rand is the session's seeded randomness.
func (s *Session) Rand() *rand.Rand { return s.rng }

// Stopping reports whether the run is ending.
func (s *Session) Stopping() bool {
	select {
	case <-s.stop:
		return true
	case <-s.ctx.Done():
		return true
	default:
		return false
	}
}

// Hold works under l for d: it sleeps, cut short when the run stops or
// the lock reports l lost (a holder that learns that stops at once).
func (s *Session) Hold(d time.Duration, l *Lease) {
	sleep(d, s.stop, l.lost, s.ctx.Done())
}

// Work is a random work time within the configured hold bounds.
func (s *Session) Work() time.Duration {
	return between(s.rng, s.r.cfg.HoldMin.D(), s.r.cfg.HoldMax.D())
}

// TTL is the lease time the clients ask for.
func (s *Session) TTL() time.Duration { return s.r.cfg.TTL.D() }

// Now is the current time on the history's clock.
func (s *Session) Now() int64 { return s.r.cfg.Rec.Now() }

func (s *Session) run() error {
	defer s.end()
	if err := s.restart(); err != nil {
		return err
	}
	for !s.Stopping() {
		key := s.r.gates.steered(s.slot, s.r.w.Next(s), s.r.cfg.Keys)
		l, err := s.acquire(key)
		if err != nil {
			return err
		}
		if l != nil {
			if err := s.hold(l); err != nil {
				return err
			}
			if err := s.release(l); err != nil {
				return err
			}
		}
		sleep(between(s.rng, 0, s.r.cfg.Pause.D()), s.stop, nil, s.ctx.Done())
	}
	return nil
}

// restart starts a new client process under a new history process id,
// ending the old one. A session's leases die with its process.
func (s *Session) restart() error {
	s.kill()
	if s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	id := s.r.nextProcess()
	logw, err := s.r.logFile(id)
	if err != nil {
		return err
	}
	o := client.Options{OnEvent: func(ev client.Event) { s.onEvent(ev) }, OnSent: s.sent}
	if logw != nil {
		o.Stderr = logw
	}
	lock, driver := s.r.cfg.lockOf(s.slot)
	p, err := client.Start(driver, o)
	if err != nil {
		return fmt.Errorf("client %d: %w", s.slot, err)
	}
	e := s.r.cfg.Endpoints
	if s.r.cfg.SlotEndpoints != nil {
		if e, err = s.r.cfg.SlotEndpoints(s.slot); err != nil {
			p.Kill()
			return fmt.Errorf("client %d: %w", s.slot, err)
		}
	}
	lo := s.r.cfg.LockOptions
	if lock != s.r.cfg.Lock {
		lo.Library = nil // the knobs are the run's lock's; a lock mixed in runs at its defaults
	}
	rep, err := p.Call(s.ctx, client.Request{Op: client.OpOpen, Lock: lock, TTLMS: s.r.cfg.TTL.D().Milliseconds(), Options: &lo, Endpoints: &e}, s.r.cfg.replyTimeout())
	if err == nil && rep.Outcome != client.OutcomeOK {
		err = errors.New(rep.Error)
	}
	if err != nil {
		p.Kill()
		return fmt.Errorf("client %d (process %d) could not open lock %s: %w", s.slot, id, lock, err)
	}
	s.mu.Lock()
	s.proc, s.process, s.grants = p, id, 0
	s.leases = map[string]*Lease{}
	s.mu.Unlock()
	s.r.track(id, p)
	s.r.noteMixed(id, lock)
	return nil
}

// kill ends the current process, if any, without waiting for it to
// finish anything: what it held is abandoned, as in a crash.
func (s *Session) kill() {
	s.mu.Lock()
	p, id := s.proc, s.process
	s.proc = nil
	s.mu.Unlock()
	if p != nil {
		p.Kill()
		s.r.track(id, nil)
	}
}

// end closes the process gracefully: the driver exits when its stdin closes.
func (s *Session) end() {
	s.mu.Lock()
	p, id := s.proc, s.process
	s.proc = nil
	s.mu.Unlock()
	if p != nil {
		p.Close(2 * time.Second)
		s.r.track(id, nil)
	}
}

// moveTo moves the session to history process id on the same OS process,
// after its driver reported an unknown outcome.
func (s *Session) moveTo(id int) {
	s.mu.Lock()
	s.process, s.grants = id, 0
	p := s.proc
	s.mu.Unlock()
	s.r.track(id, p)
}

// call records inv, sends req, records the completion (filled by done for
// ok and fail replies) and returns its type. A request that never reached a
// live driver fails; a driver that hung, died or broke the protocol leaves
// the outcome unknown and is replaced.
func (s *Session) call(inv history.Op, req client.Request, done func(client.Reply, *history.Op)) (client.Reply, history.Type, error) {
	rec := s.r.cfg.Rec
	busy := make(chan struct{})
	s.mu.Lock()
	s.busy = busy
	s.mu.Unlock()
	inv.Type, inv.Process = history.Invoke, s.process
	rec.Record(inv)
	out := history.Op{Process: inv.Process, F: inv.F, Key: inv.Key, Lease: inv.Lease}
	s.mu.Lock()
	s.inflight, s.sentAt, s.aimed = &inv, time.Time{}, false
	s.mu.Unlock()
	rep, err := s.proc.Call(s.ctx, req, s.r.cfg.replyTimeout())
	s.mu.Lock()
	sentAt, aimed := s.sentAt, s.aimed
	s.inflight = nil
	s.mu.Unlock()
	if err == nil && rep.Outcome == client.OutcomeOK && !sentAt.IsZero() && !aimed && aimable(inv) {
		// A struck request's latency includes its stop: not the client's.
		s.r.noteLatency(s.slot, inv.F, time.Since(sentAt))
	}
	switch {
	case errors.Is(err, client.ErrNotSent):
		out.Type, out.Error = history.Fail, err.Error()
	case err != nil:
		out.Type, out.Error = history.Info, err.Error()
	case rep.Outcome == client.OutcomeOK || rep.Outcome == client.OutcomeFail:
		out.Type, out.Error = history.Type(rep.Outcome), rep.Error
		out.Began, out.Ended = s.began(rep, inv.Time)
		if done != nil {
			done(rep, &out)
		}
	case rep.Outcome == client.OutcomeInfo:
		out.Type, out.Error = history.Info, rep.Error
	default:
		out.Type, out.Error = history.Info, fmt.Sprintf("the driver answered an unknown outcome %q", rep.Outcome)
		err = errors.New(out.Error)
	}
	if err == nil && out.Type == history.Info {
		// The client goes on under a new id, named here as its successor.
		out.Next = s.r.nextProcess()
	}
	rec.Record(out)
	close(busy)
	switch {
	case err != nil:
		return rep, out.Type, s.restart()
	case out.Type == history.Info:
		s.moveTo(out.Next)
	}
	return rep, out.Type, nil
}

// leaseTTL is the lease time of an ok grant or renewal: the configured
// one, or the longer one the lock says it set (a lease the lock made
// longer than asked lasts as long as it says, for the judge too).
func leaseTTL(configured int64, rep client.Reply) int64 {
	return max(configured, rep.TTLMS*int64(time.Millisecond))
}

// began places the client's stamps of when it began and ended a call on
// the history's clock, within the call (stamps outside it, or out of
// order, are no reading).
func (s *Session) began(rep client.Reply, invoked int64) (began, ended int64) {
	if rep.BeganMonoNS == 0 {
		return 0, 0
	}
	now := s.r.cfg.Rec.Now()
	b := s.r.cfg.Rec.FromMono(rep.BeganMonoNS)
	if b < invoked || b > now {
		return 0, 0
	}
	if rep.EndedMonoNS == 0 {
		return b, 0
	}
	e := s.r.cfg.Rec.FromMono(rep.EndedMonoNS)
	if e < b || e > now {
		return b, 0
	}
	return b, e
}

// aimable: a fault may time itself from op's request (sends.go): an
// acquire, a release, or the holder's own renewal (an extend, a
// reacquire), recorded as history.Renew.
func aimable(op history.Op) bool {
	return op.F == history.Acquire || op.F == history.Release || (op.F == history.Renew && op.Via != "")
}

// sent hears the write of a request (on the session's goroutine, inside
// call) and offers an acquire, a release or an extend to a fault timed
// from it.
func (s *Session) sent(req client.Request, at time.Time) {
	s.mu.Lock()
	inv := s.inflight
	s.sentAt = at
	s.mu.Unlock()
	if inv == nil || !aimable(*inv) {
		return
	}
	if s.r.offerSend(s, *inv, req.ID, at) {
		s.mu.Lock()
		s.aimed = true
		s.mu.Unlock()
	}
}

// alive replaces a process that died between requests (a crash-client
// fault kills it while the session works under its lease): its leases died
// with it, and nothing is recorded for a request it can no longer get.
func (s *Session) alive() error {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil {
		// A restart that failed (the run was interrupted) left none: try
		// again, which returns why.
		return s.restart()
	}
	select {
	case <-p.Exited():
		return s.restart()
	default:
		return nil
	}
}

// acquire asks for key under a lease id of the harness's own, and returns
// the lease when granted. The error is a failure to keep a client running.
func (s *Session) acquire(key string) (*Lease, error) { return s.acquireAs(key, false) }

// acquireAs is acquire; a nested one (a re-entry) passes no gate.
func (s *Session) acquireAs(key string, nested bool) (*Lease, error) {
	if !nested && !s.r.gates.pass(s.slot, key, s.stop, s.ctx.Done()) {
		return nil, nil // the run ended while the key was kept for another client
	}
	if err := s.alive(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.grants++
	id := fmt.Sprintf("p%d.%d", s.process, s.grants)
	s.mu.Unlock()
	ttl := int64(s.r.cfg.TTL)
	inv := history.Op{F: history.Acquire, Key: key, Lease: id, TTL: ttl}
	req := client.Request{Op: client.OpAcquire, Key: key, Lease: id}
	rep, t, err := s.call(inv, req, func(rep client.Reply, op *history.Op) {
		op.TTL = ttl
		if rep.QueuedMonoNS != 0 {
			op.Queued = max(s.r.cfg.Rec.FromMono(rep.QueuedMonoNS), 0)
		}
		if rep.Outcome == client.OutcomeFail {
			op.Refused, op.Owner = rep.Refused, rep.Token // the token it tried, when it says
			return
		}
		op.Owner, op.Fence, op.Seq = rep.Token, rep.Fence, rep.Seq
		op.TTL = leaseTTL(ttl, rep)
		if tried := s.r.cfg.Rec.FromMono(rep.TryBeganMonoNS); rep.TryBeganMonoNS != 0 && tried >= max(op.Began, inv.Time) && tried <= s.r.cfg.Rec.Now() && (op.Ended == 0 || tried <= op.Ended) {
			op.Tried = tried // a stamp outside the call is no reading
		}
		if rep.DeadlineMonoNS != 0 {
			op.Deadline = max(s.r.cfg.Rec.FromMono(rep.DeadlineMonoNS), 0)
		}
	})
	if err == nil && t == history.Fail && rep.Refused && rep.Token != "" {
		s.r.inspect(s.ctx, key, id, rep.Token)
	}
	if err == nil && t != history.OK {
		s.reachAs(history.Acquire, key, id, false)
	}
	if err != nil || t != history.OK {
		return nil, err
	}
	l := &Lease{ID: id, Key: key, Token: rep.Token, Fence: rep.Fence, lost: make(chan struct{}), watchdog: -1}
	s.mu.Lock()
	s.leases[id] = l
	s.mu.Unlock()
	s.reach(history.Acquire, l)
	return l, nil
}

// release gives l back. The session forgets l whatever the outcome: the
// client no longer counts on it.
func (s *Session) release(l *Lease) error {
	if err := s.alive(); err != nil {
		return err
	}
	s.mu.Lock()
	_, mine := s.leases[l.ID]
	s.mu.Unlock()
	if !mine {
		return nil // its process was replaced: the lease died with it
	}
	inv := history.Op{F: history.Release, Key: l.Key, Lease: l.ID, Owner: l.Token}
	_, _, err := s.call(inv, client.Request{Op: client.OpRelease, Lease: l.ID}, func(rep client.Reply, op *history.Op) {
		op.Refused = rep.Refused && rep.Outcome == client.OutcomeFail // the lock said not held
	})
	s.mu.Lock()
	delete(s.leases, l.ID)
	s.mu.Unlock()
	return err
}

// Renew makes the holder's own call on l, via history.ViaExtend or
// ViaReacquire, and records it as a renewal of l on the client's process:
// its type is OK when the lock said the lease goes on, Fail when it said
// it does not, Info when unknown. A lease whose process was replaced
// returns Fail without a call.
func (s *Session) Renew(l *Lease, via string) history.Type {
	if err := s.alive(); err != nil {
		return history.Fail
	}
	s.mu.Lock()
	_, mine := s.leases[l.ID]
	s.mu.Unlock()
	if !mine {
		return history.Fail
	}
	ttl := int64(s.r.cfg.TTL)
	inv := history.Op{F: history.Renew, Key: l.Key, Lease: l.ID, Owner: l.Token, TTL: ttl, Via: via}
	_, t, err := s.call(inv, client.Request{Op: via, Lease: l.ID}, func(rep client.Reply, op *history.Op) {
		op.TTL, op.Via = ttl, via
		if rep.Outcome == client.OutcomeOK {
			op.TTL = leaseTTL(ttl, rep)
		} else {
			op.Refused = rep.Refused
		}
		if rep.Outcome == client.OutcomeOK && rep.DeadlineMonoNS != 0 {
			op.Deadline = max(s.r.cfg.Rec.FromMono(rep.DeadlineMonoNS), 0)
		}
	})
	if err != nil {
		return history.Info
	}
	return t
}

// Resource runs one command on the protected resource under l and records
// it as operation f on the lock key: inv fills the invocation (the value to
// write, the fencing token), done fills an ok or failed completion from the
// reply. It returns the reply and the completion's type; a lease whose
// process was replaced returns Fail without a call.
func (s *Session) Resource(f history.F, l *Lease, command []any, inv func(*history.Op), done func(client.Reply, *history.Op)) (client.Reply, history.Type) {
	if err := s.alive(); err != nil {
		return client.Reply{}, history.Fail
	}
	s.mu.Lock()
	_, mine := s.leases[l.ID]
	s.mu.Unlock()
	if !mine {
		return client.Reply{}, history.Fail
	}
	op := history.Op{F: f, Key: l.Key, Lease: l.ID}
	if inv != nil {
		inv(&op)
	}
	rep, t, err := s.call(op, client.Request{Op: client.OpResource, Command: command}, done)
	if err != nil {
		return rep, history.Info
	}
	if t == history.OK && f == history.Read {
		s.reach(history.Read, l)
	}
	return rep, t
}

// onEvent records what the client's lock did on its own. It runs on the
// process's reader goroutine.
func (s *Session) onEvent(ev client.Event) {
	rec := s.r.cfg.Rec
	if ev.Event == client.EventStopped {
		s.mu.Lock()
		id, p := s.process, s.proc
		s.mu.Unlock()
		s.r.stopped(moment.Stop{Process: id, Point: ev.Point, Key: ev.Key, Proc: asProcess(p)})
		return
	}
	s.mu.Lock()
	l := s.leases[ev.Lease]
	s.mu.Unlock()
	if l == nil {
		return // a lease this session gave up: its process's events no longer count
	}
	at := rec.FromMono(ev.MonoNS)
	op := history.Op{F: history.Renew, Key: l.Key, Lease: l.ID, Owner: l.Token, TTL: int64(s.r.cfg.TTL)}
	switch {
	case ev.Event == client.EventRenew && ev.Phase == client.PhaseInvoke:
		op.Type, op.Process = history.Invoke, s.watchdog(l, true)
	case ev.Event == client.EventRenew:
		op.Type, op.Process, op.Error, op.Refused = history.Type(ev.Phase), s.watchdog(l, false), ev.Error, ev.Refused && ev.Phase == client.OutcomeFail
		if op.Process < 0 {
			return // a completion without its invocation: nothing to pair it with
		}
		if !op.Type.Completes() {
			op.Type, op.Error = history.Info, fmt.Sprintf("unknown renewal phase %q", ev.Phase)
		}
		if op.Type == history.OK && ev.DeadlineMonoNS != 0 {
			op.Deadline = max(rec.FromMono(ev.DeadlineMonoNS), 0)
		}
		if op.Type == history.Info {
			defer s.retireWatchdog(l)
		}
	case ev.Event == client.EventLost:
		// On a process of its own: the deadline may pass while a renewal
		// is still in flight on the watchdog's, which must not invoke twice.
		op.F, op.Type, op.Process = history.Lost, history.Invoke, s.oneOff()
		rec.RecordStamped(op, at)
		op.Type = history.OK
		l.lostOnce.Do(func() { close(l.lost) })
	default:
		return
	}
	rec.RecordStamped(op, at)
}

// watchdog is the history process of l's renewals; fresh allocates one if
// it has none yet.
func (s *Session) watchdog(l *Lease, fresh bool) int {
	s.mu.Lock()
	if l.watchdog >= 0 || !fresh {
		defer s.mu.Unlock()
		return l.watchdog
	}
	l.watchdog = s.r.nextProcess()
	id, proc := l.watchdog, s.proc
	s.mu.Unlock()
	// Outside s.mu: the runner's lock is taken before a session's
	// elsewhere (Runner.Client, Runner.Quiet), never after.
	s.r.track(id, proc)
	return id
}

// oneOff allocates a history process of this session's client for one
// operation.
func (s *Session) oneOff() int {
	id := s.r.nextProcess()
	s.mu.Lock()
	proc := s.proc
	s.mu.Unlock()
	s.r.track(id, proc) // outside s.mu, as in watchdog
	return id
}

// retireWatchdog gives l's next renewal a new process: the unknown one may
// still take effect.
func (s *Session) retireWatchdog(l *Lease) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l.watchdog = -1
}
