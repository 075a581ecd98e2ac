package workloads

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/history"
)

// incrementer is a read-modify-write under the lock, one integer register
// per lock key: read it, work for a random time, write the value + 1. Two
// holders at once, or a holder that writes after its lease ran out,
// overwrite each other's increments. Every write returns the value it
// replaced, so the history shows which increments each write destroyed.
// The workloads that use it differ only in the register's commands.
type incrementer struct {
	keys []string
	// scripts are loaded on the resource before the clients call them by hash.
	scripts []*redis.Script
	reset   func(ctx context.Context, rdb *redis.Client, key string) error
	get     func(ctx context.Context, rdb *redis.Client, key string) (int64, error)
	read    func(l *Lease) []any
	write   func(l *Lease, v int64) []any
	// fenced operations carry the lease's fencing token.
	fenced bool
}

func (w *incrementer) Setup(ctx context.Context, h *Harness) error {
	for _, sc := range w.scripts {
		if err := sc.Load(ctx, h.Resource).Err(); err != nil {
			return err
		}
	}
	for _, k := range w.keys {
		if err := h.Write(ctx, k, 0, func(ctx context.Context) error { return w.reset(ctx, h.Resource, k) }); err != nil {
			return err
		}
	}
	return nil
}

func (w *incrementer) Next(s *Session) string { return w.keys[s.Rand().IntN(len(w.keys))] }

func (w *incrementer) Critical(_ context.Context, s *Session, l *Lease) {
	read, ok := w.read1(s, l)
	if !ok {
		return
	}
	s.Hold(s.Work(), l)
	if gone(s, l) {
		return
	}
	w.write1(s, l, read)
}

// read1 reads l's register under l: its value, and whether the read was ok.
func (w *incrementer) read1(s *Session, l *Lease) (int64, bool) {
	var read int64
	_, t := s.Resource(history.Read, l, w.read(l), w.fence(l), func(rep client.Reply, op *history.Op) {
		into(value)(rep, op)
		if op.Value != nil {
			read = *op.Value
		}
	})
	return read, t == history.OK
}

// write1 writes read + 1 to l's register under l.
func (w *incrementer) write1(s *Session, l *Lease, read int64) {
	fence := w.fence(l)
	s.Resource(history.Write, l, w.write(l, read+1),
		func(op *history.Op) { fence(op); op.Value = history.Int(read + 1) }, into(prev))
}

// fence stamps an operation with l's fencing token when the register is fenced.
func (w *incrementer) fence(l *Lease) func(*history.Op) {
	return func(op *history.Op) {
		if w.fenced {
			op.Fence = l.Fence
		}
	}
}

func (w *incrementer) Final(ctx context.Context, h *Harness) error {
	for _, k := range w.keys {
		if _, err := h.Read(ctx, k, func(ctx context.Context) (int64, error) { return w.get(ctx, h.Resource, k) }); err != nil {
			return err
		}
	}
	return nil
}
