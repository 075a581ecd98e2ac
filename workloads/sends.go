package workloads

import (
	"context"
	"slices"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/workloads/moment"
)

// sendCatch is one fault waiting for a request.
type sendCatch struct {
	aim moment.Aim
	got chan *moment.Sending // buffered: a session never blocks on delivery
}

// latencies keeps each client slot's recent latencies per operation.
type latencies map[latencyKey][]time.Duration

type latencyKey struct {
	slot int
	op   history.F
}

const (
	// keptLatencies is how many recent latencies a slot keeps per op.
	keptLatencies = 16
	// ownLatencies is how many a slot needs before its own are used.
	ownLatencies = 3
)

// CatchSend waits until a client writes a request that a matches and
// returns it. It fails only when ctx ends first. A request is caught only
// once some latency for its operation is known.
func (r *Runner) CatchSend(ctx context.Context, a moment.Aim) (*moment.Sending, error) {
	c := &sendCatch{aim: a, got: make(chan *moment.Sending, 1)}
	r.mu.Lock()
	r.sendCatches = append(r.sendCatches, c)
	r.mu.Unlock()
	select {
	case s := <-c.got:
		return s, nil
	case <-ctx.Done():
		r.mu.Lock()
		r.sendCatches = slices.DeleteFunc(r.sendCatches, func(x *sendCatch) bool { return x == c })
		r.mu.Unlock()
		select {
		case s := <-c.got:
			return s, nil // caught as ctx ended: its fault may still strike
		default:
		}
		return nil, ctx.Err()
	}
}

// offerSend hands the request s has just written (inv, request id, at) to
// a fault waiting for it, and reports whether one took it.
func (r *Runner) offerSend(s *Session, inv history.Op, id int64, at time.Time) bool {
	r.mu.Lock()
	var match *sendCatch
	for _, c := range r.sendCatches {
		a := c.aim
		if a.Op == inv.F && (a.Key == "" || a.Key == inv.Key) && (a.Slot == moment.AnySlot || a.Slot == s.slot) {
			match = c
			break
		}
	}
	if match == nil {
		r.mu.Unlock()
		return false
	}
	lat := r.latencyLocked(s.slot, inv.F)
	slots := append([]*Session(nil), r.slots...)
	r.mu.Unlock()
	if lat == 0 || (match.aim.Quiet && !quiet(slots, s, inv.Key)) {
		return false
	}
	s.mu.Lock()
	proc := s.proc
	s.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	i := slices.Index(r.sendCatches, match)
	if i < 0 {
		return false // it gave up meanwhile
	}
	r.sendCatches = slices.Delete(r.sendCatches, i, i+1)
	match.got <- &moment.Sending{Slot: s.slot, Process: inv.Process, Proc: asProcess(proc), ID: id, Op: inv.F, Key: inv.Key, Lease: inv.Lease, At: at, Latency: lat}
	return true
}

// quiet reports that no session but s holds key or is asking for it.
// Each session is looked at under its own lock, none under the runner's.
func quiet(slots []*Session, s *Session, key string) bool {
	for _, o := range slots {
		if o == s {
			continue
		}
		o.mu.Lock()
		busy := o.inflight != nil && o.inflight.F == history.Acquire && o.inflight.Key == key
		for _, l := range o.leases {
			busy = busy || l.Key == key
		}
		o.mu.Unlock()
		if busy {
			return false
		}
	}
	return true
}

// noteLatency keeps d as slot's latest latency for op.
func (r *Runner) noteLatency(slot int, op history.F, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := latencyKey{slot, op}
	ds := append(r.latencies[k], d)
	if len(ds) > keptLatencies {
		ds = ds[len(ds)-keptLatencies:]
	}
	r.latencies[k] = ds
}

// latencyLocked is slot's recent latency for op (see moment.Sending.Latency), 0
// when none is known yet. Call it under r.mu.
func (r *Runner) latencyLocked(slot int, op history.F) time.Duration {
	ds := r.latencies[latencyKey{slot, op}]
	if len(ds) < ownLatencies {
		ds = nil
		for k, d := range r.latencies {
			if k.op == op {
				ds = append(ds, d...)
			}
		}
	}
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}
