package workloads

import (
	"context"
	"sync"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/workloads/moment"
)

// asProcess is p as a fault strikes it: nil when there is none, never an
// interface holding a nil pointer, which would look like a process.
func asProcess(p *client.Process) moment.Process {
	if p == nil {
		return nil
	}
	return p
}

// catch is one fault waiting for its moment.
type catch struct {
	m   moment.Moment
	got chan *moment.Caught // buffered: a session never blocks on delivery
}

// Catch waits until a client reaches m and holds it there: the caller must
// Let it go. The client's process stays the same while it is held. It
// fails only when ctx ends first.
func (r *Runner) Catch(ctx context.Context, m moment.Moment) (*moment.Caught, error) {
	if m.On == "" {
		m.On = history.Acquire
	}
	c := &catch{m: m, got: make(chan *moment.Caught, 1)}
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
	var held []chan struct{} // each closed when its fault lets the client go
	r.mu.Lock()
	keep := r.catches[:0]
	for _, c := range r.catches {
		if c.m.On != f || c.m.Key != key || (c.m.Slot != moment.AnySlot && c.m.Slot != s.slot) || (!ok && !c.m.Asked) {
			keep = append(keep, c)
			continue
		}
		let := make(chan struct{})
		c.got <- &moment.Caught{Slot: s.slot, Process: process, Proc: asProcess(proc), Lease: id, Let: sync.OnceFunc(func() { close(let) })}
		held = append(held, let)
	}
	r.catches = keep
	r.mu.Unlock()
	for _, let := range held {
		select {
		case <-let:
		case <-s.ctx.Done():
			return
		}
	}
}

// Quiet waits until the client process proc has no request in flight:
// the completion of the one it was sent last is recorded. A process no
// session runs any more has none. It fails only when ctx ends first.
func (r *Runner) Quiet(ctx context.Context, p moment.Process) error {
	proc, _ := p.(*client.Process) // nil: a session with no process now
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
