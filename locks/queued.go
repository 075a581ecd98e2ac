package locks

import "context"

// A lock that keeps waiters in line (the fair lock) says when one of its
// acquires first learned it stands in the queue, so that a harness can time
// it on its own clock: a waiter that stood in line before another even
// asked must be granted first. The lock only says it; the harness stamps
// the moment and judges the order from its own records.

type queuedKey struct{}

// Queuer is a lock that keeps waiters in line and says so (NoteQueued):
// a scenario that judges the queue's order runs only such a lock.
type Queuer interface {
	// Queues reports that the lock keeps its waiters in line.
	Queues() bool
}

// Queues reports that the registered lock keeps waiters in line.
func Queues(name string) bool {
	return inspect(name, func(l Lock) bool {
		q, ok := l.(Queuer)
		return ok && q.Queues()
	})
}

// WithQueued returns ctx with a hook that an Acquire under it calls once it
// stands in the lock's queue (after the reply that put it there).
func WithQueued(ctx context.Context, hook func()) context.Context {
	return context.WithValue(ctx, queuedKey{}, hook)
}

// NoteQueued calls the hook of WithQueued, if ctx has one.
func NoteQueued(ctx context.Context) {
	if hook, ok := ctx.Value(queuedKey{}).(func()); ok {
		hook()
	}
}
