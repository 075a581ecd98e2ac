package locks

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// The calls a holder makes on a lease it has, beside Release: applications
// extend a lease from a heartbeat, or acquire the key they hold again from
// a keepalive loop, and go on working on the lock's yes. A lock offers them
// by implementing these interfaces; the judge checks every yes against
// what the harness saw (package checker, "replies").

// Extender is a lock whose holder can extend a lease it holds.
type Extender interface {
	// Extend gives l a new TTL from now when it still holds its key: nil
	// when extended (l.Deadline moved), ErrNotHeld when the lock says the
	// key was no longer l's, ErrNoEffect when the call certainly never
	// ran, and any other error when the outcome is unknown.
	Extend(ctx context.Context, l *Lease) error
}

// Reacquirer is a lock whose holder may acquire the key it holds again
// through the same lock object (go-zero's RedisLock, redis-py's
// reacquire): the errors are Extend's.
type Reacquirer interface {
	Reacquire(ctx context.Context, l *Lease) error
}

// Renewer is a lock that may renew a lease on its own while it is held
// (a watchdog, as Redisson's and rueidislock's): its renewals decide a
// lease as an extend does, so faults are aimed at them too.
type Renewer interface {
	// RenewsWhileHeld reports whether this lock instance renews its leases.
	RenewsWhileHeld() bool
}

// Renews reports a registered lock that renews its leases on its own.
func Renews(name string) bool {
	return inspect(name, func(l Lock) bool {
		r, ok := l.(Renewer)
		return ok && r.RenewsWhileHeld()
	})
}

// The calls on a held lease, as the protocol and the history name them.
const (
	CallExtend    = "extend"
	CallReacquire = "reacquire"
)

// Calls lists the calls on a held lease that the registered lock offers.
func Calls(name string) []string { return inspect(name, CallsOf) }

// inspect builds the registered lock over endpoints it never dials, for
// what its type says it can do; the zero T when it cannot be built.
func inspect[T any](name string, f func(Lock) T) T {
	l, err := New(name, unreachableFor(name), Options{})
	if err != nil {
		var zero T
		return zero
	}
	defer Close(l)
	return f(l)
}

// CallsOf lists the calls on a held lease that l offers.
func CallsOf(l Lock) []string {
	var out []string
	if _, ok := l.(Extender); ok {
		out = append(out, CallExtend)
	}
	if _, ok := l.(Reacquirer); ok {
		out = append(out, CallReacquire)
	}
	return out
}

var extendScript = script("extend.lua")

// extendOn runs the owner-checked extend on one node.
func extendOn(ctx context.Context, rdb redis.UniversalClient, timeout time.Duration, l *Lease) error {
	return ownerChecked(ctx, rdb, timeout, extendScript, l.Key, l.Token, l.TTL.Milliseconds())
}

// ownerChecked runs a script that acts on key only while it holds token
// (it returns 0 otherwise), on one node within timeout: ErrNotHeld when
// it did not act, ErrNoEffect when it never ran, any other error unknown.
func ownerChecked(ctx context.Context, rdb redis.UniversalClient, timeout time.Duration, s *redis.Script, key, token string, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	n, err := s.Run(ctx, rdb, []string{key}, append([]any{token}, args...)...).Int()
	return HeldResult(n != 0, err)
}
