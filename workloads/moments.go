package workloads

import (
	"context"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/history"
)

// Moment is a workload event a fault is aimed at: an ok acquire of Key,
// or an ok read of the resource under a lease of Key (inside the critical
// section, before the write), by client slot Slot (AnySlot: any client).
type Moment struct {
	Key  string
	On   history.F // history.Acquire (the default) or history.Read
	Slot int
	// Asked takes an acquire of Key that ended in any outcome (a refusal,
	// an error): the moment is that the client asked, not that it got.
	Asked bool
}

// Caught is a client held at a moment: its session has recorded the event
// and waits, lease in hand, until Let. A fault that strikes in between
// strikes at the moment by construction, not by winning a race with the
// client's next request.
type Caught struct {
	Slot    int
	Process int // the history process that reached the moment
	Proc    *client.Process
	Lease   string
	let     chan struct{}
}

// Let the client go on.
func (c *Caught) Let() {
	select {
	case <-c.let:
	default:
		close(c.let)
	}
}

// catch is one fault waiting for its moment.
type catch struct {
	m   Moment
	got chan *Caught // buffered: a session never blocks on delivery
}

// Catch waits until a client reaches m and holds it there: the caller must
// Let it go. The client's process stays the same while it is held. It
// fails only when ctx ends first.
func (r *Runner) Catch(ctx context.Context, m Moment) (*Caught, error) {
	if m.On == "" {
		m.On = history.Acquire
	}
	c := &catch{m: m, got: make(chan *Caught, 1)}
	r.mu.Lock()
	r.catches = append(r.catches, c)
	r.mu.Unlock()
	select {
	case caught := <-c.got:
		return caught, nil
	case <-ctx.Done():
		r.mu.Lock()
		for i, x := range r.catches {
			if x == c {
				r.catches = append(r.catches[:i], r.catches[i+1:]...)
				break
			}
		}
		r.mu.Unlock()
		// A client caught just as ctx ended must not wait forever.
		select {
		case caught := <-c.got:
			caught.Let()
		default:
		}
		return nil, ctx.Err()
	}
}

// reach tells waiting faults that the session's client completed f on l
// ok, and holds it there until every fault that caught it lets it go (or
// the run is interrupted).
func (s *Session) reach(f history.F, l *Lease) { s.reachAs(f, l.Key, l.ID, true) }

// reachAs is reach for the operation of key under lease id, whatever its
// outcome: only a moment that takes any (Moment.Asked) sees one not ok.
func (s *Session) reachAs(f history.F, key, id string, ok bool) {
	r := s.r
	s.mu.Lock()
	process, proc := s.process, s.proc
	s.mu.Unlock()
	var held []*Caught
	r.mu.Lock()
	keep := r.catches[:0]
	for _, c := range r.catches {
		if c.m.On != f || c.m.Key != key || (c.m.Slot != AnySlot && c.m.Slot != s.slot) || (!ok && !c.m.Asked) {
			keep = append(keep, c)
			continue
		}
		caught := &Caught{Slot: s.slot, Process: process, Proc: proc, Lease: id, let: make(chan struct{})}
		c.got <- caught
		held = append(held, caught)
	}
	r.catches = keep
	r.mu.Unlock()
	for _, c := range held {
		select {
		case <-c.let:
		case <-s.ctx.Done():
			return
		}
	}
}

// Quiet waits until the client process proc has no request in flight:
// the completion of the one it was sent last is recorded. A process no
// session runs any more has none. It fails only when ctx ends first.
func (r *Runner) Quiet(ctx context.Context, proc *client.Process) error {
	var busy chan struct{}
	r.mu.Lock()
	for _, s := range r.slots {
		s.mu.Lock()
		if s.proc == proc {
			busy = s.busy
		}
		s.mu.Unlock()
	}
	r.mu.Unlock()
	if busy == nil {
		return nil
	}
	select {
	case <-busy:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
