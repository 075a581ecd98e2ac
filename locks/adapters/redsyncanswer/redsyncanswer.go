// Package redsyncanswer reads what go-redsync/redsync v4 answers, for
// both of deadbolt's redsync locks: the in-tree adapter
// (locks/adapters/redsync.go, at deadbolt's own version) and the driver
// built at any v4 version (drivers/go/redsync4). It does not import
// redsync: the driver builds it beside versions whose error types differ
// or do not exist, so it knows them by message (the sentinels) and by
// type name and exported fields (ErrTaken, ErrNodeTaken, RedisError).
//
// What each version returns (LockContext's error is its last try's):
//
//   - v4.0.0-v4.6.x: plain errors joined by hashicorp multierror, one per
//     master whose command failed (a master that said no or took the key
//     is not named); ErrFailed when the tries ran out. Up to v4.7.0 a try
//     that no master granted and some failed returns at once, without a
//     give-back. v4.4.3-v4.6.x return the last give-back's errors instead
//     of the last try's.
//   - v4.7.0 on: every master that did not act is named, RedisError{Node,
//     Err} (values until v4.8.0, pointers since; Unwrap since v4.13.0) or
//     ErrNodeTaken{Node}, or, when a quorum said taken, ErrTaken{Nodes}
//     alone (the other masters' answers dropped); a master that acted is
//     not named. ErrLockAlreadyExpired (unlock, v4.12.0 on) is one per
//     master whose key was gone. errors.Join since v4.17.0.
//   - Every version gives a try without quorum back on every master and
//     drops the give-back's answers, so an acquire that took a master
//     never certainly left nothing.
package redsyncanswer

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/deadbolt-lab/deadbolt/locks"
)

// redsync's sentinel errors, by message: the same text in every v4.
const (
	errFailed       = "redsync: failed to acquire lock"
	errExtendFailed = "redsync: failed to extend lock"
	errExpired      = "redsync: failed to unlock, lock was already expired"
)

// Acquire maps LockContext's error (err not nil) onto the Lock contract.
// ctxErr is the context's error after the call, masters how many pools
// the mutex has, inTime whether the call ended while a grant could still
// have been valid (InTime).
//
//   - The context ended, or a master's answer is unknown: unknown.
//   - Every master said taken: a refusal (ErrNotAcquired).
//   - A master took the key and redsync gave it back: ErrNotAcquired with
//     ErrUndone, no refusal. Where the error hides whether the others
//     took it or said no (ErrFailed, or ErrTaken naming fewer than every
//     master), it is read so too: never a refusal that may not be one.
//   - No master took it and some could not be reached: ErrNotAcquired
//     with their errors, no refusal.
func Acquire(err, ctxErr error, masters int, inTime bool) error {
	if err == nil {
		return nil
	}
	if ctxErr != nil {
		// It may have stopped between tries, whose answers it dropped.
		return fmt.Errorf("redsync: %w (after %w)", err, ctxErr)
	}
	a := read(err)
	switch {
	case len(a.unknown) > 0:
		return fmt.Errorf("redsync: %w", err)
	case a.failed:
		// Up to v4.6.x a single master's no is ErrFailed in time (a late
		// grant is given back); later a no is ErrTaken, and ErrFailed a
		// late grant. On more masters ErrFailed hides who took it.
		if masters == 1 && inTime {
			return refused(err)
		}
		return undone(err, "no try was granted in time")
	case a.collapsed:
		if a.rest(masters) == 0 {
			return refused(err)
		}
		return undone(err, "a quorum was another's, what the others did is not said")
	case a.named && a.rest(masters) > 0:
		return undone(err, fmt.Sprintf("%d of %d masters took it", a.rest(masters), masters))
	case a.named && len(a.unsent) == 0:
		return refused(err)
	case !a.named && len(a.unsent) < masters:
		// Up to v4.6.x a master that took the key is not named (and
		// v4.4.3-v4.6.x name the give-back's failures).
		return undone(err, "the masters it does not name said no or took it")
	}
	// No master took it and some could not be reached.
	return fmt.Errorf("redsync: %w", locks.AcquireResult(false, causes{err, a.unsent}))
}

func refused(err error) error {
	return fmt.Errorf("%w: redsync: %w", locks.AcquireResult(false, nil), err)
}

func undone(err error, why string) error {
	return fmt.Errorf("%w: redsync: %w (%s: %w)", locks.AcquireResult(false, nil), err, why, locks.ErrUndone)
}

// InTime reports whether an acquire that took elapsed ended while a grant
// was still valid: redsync grants a try whose time plus TTL x drift
// factor is under the TTL, and a call lasts at least its last try.
func InTime(elapsed, ttl time.Duration, driftFactor float64) bool {
	return elapsed < ttl-time.Duration(float64(ttl)*driftFactor)
}

// Held maps the (ok, err) of UnlockContext or ExtendContext (call names
// it) onto the Lock contract. A call that took effect on some masters but
// fewer than a quorum did not do nothing: its outcome is unknown, never
// ErrNotHeld. (delay-redsync, seed 862794: a "failed" release had deleted
// the key on some masters, the others' copies had expired, the next
// client took a majority before the lease's TTL, and the judge, told
// nothing was released, saw a double hold.) A quorum that said the key
// was not ours is ErrNotHeld; no master reached is ErrNoEffect; an
// extend a quorum took too late (ErrExtendFailed) is unknown.
func Held(call string, ok bool, err error, masters int) error {
	if ok {
		return nil
	}
	a := read(err)
	if err == nil {
		err = errors.New("it said false")
	}
	quorum := masters/2 + 1
	switch {
	case a.extendFailed:
		return fmt.Errorf("redsync %s: a quorum took it too late for any validity: %w", call, err)
	case len(a.unknown) > 0:
		return fmt.Errorf("redsync %s: %w", call, err)
	case a.named && !a.collapsed && a.rest(masters) > 0:
		// Fewer than a quorum, or it would have said true.
		return fmt.Errorf("redsync %s: took effect on %d of %d masters, fewer than a quorum: %w", call, a.rest(masters), masters, err)
	case !(a.named && !a.collapsed) && min(a.rest(masters), quorum-1) > 0:
		// The masters not named said no or acted (or, after an ErrTaken,
		// acted or failed): up to quorum-1 may have acted.
		return fmt.Errorf("redsync %s: may have taken effect on up to %d of %d masters: %w", call, min(a.rest(masters), quorum-1), masters, err)
	case masters-len(a.unsent) >= quorum:
		return fmt.Errorf("%w: redsync %s: %w", locks.HeldResult(false, nil), call, err)
	}
	return fmt.Errorf("redsync %s: %w", call, locks.HeldResult(false, causes{err, a.unsent}))
}

// causes is redsync's error that also unwraps to the masters' own errors,
// so that locks' helpers find them (RedisError has no Unwrap before
// v4.13.0).
type causes struct {
	err error
	of  []error
}

func (c causes) Error() string   { return c.err.Error() }
func (c causes) Unwrap() []error { return append([]error{c.err}, c.of...) }

// answer is what redsync's error says of each master.
type answer struct {
	failed, extendFailed bool
	// no counts the masters named as not ours: taken by another (ErrTaken,
	// ErrNodeTaken) or gone (ErrLockAlreadyExpired).
	no int
	// unsent and unknown are the errors of the masters whose command
	// certainly had no effect, and of those where it may have had one.
	unsent, unknown []error
	// named: the error names every master that did not act (v4.7.0 on),
	// so a master not named acted. collapsed: an ErrTaken stands for the
	// answer, and the masters it leaves out acted or failed.
	named, collapsed bool
}

// rest counts the masters the answer does not name as failed.
func (a answer) rest(masters int) int {
	return masters - a.no - len(a.unsent) - len(a.unknown)
}

func read(err error) answer {
	var a answer
	for _, e := range leaves(err) {
		switch msg := e.Error(); {
		case msg == errFailed:
			a.failed = true
			continue
		case msg == errExtendFailed:
			a.extendFailed = true
			continue
		case msg == errExpired:
			a.no++
			a.named = true
			continue
		}
		v := structOf(e)
		if nodes, ok := field[[]int](v, "ErrTaken", "Nodes"); ok {
			a.no += len(nodes)
			a.named, a.collapsed = true, true
			continue
		}
		if _, ok := field[int](v, "ErrNodeTaken", "Node"); ok {
			a.no++
			a.named = true
			continue
		}
		if inner, ok := field[error](v, "RedisError", "Err"); ok && inner != nil {
			// Read the cause itself: RedisError has Unwrap only since v4.13.0.
			e, a.named = inner, true
		}
		if locks.Classify(e) == locks.NoEffect {
			a.unsent = append(a.unsent, e)
		} else {
			a.unknown = append(a.unknown, e)
		}
	}
	return a
}

// leaves flattens joined errors: errors.Join's and hashicorp multierror's
// (WrappedErrors), which v4 returned until v4.17.0.
func leaves(err error) []error {
	var joined []error
	switch j := err.(type) {
	case nil:
		return nil
	case interface{ Unwrap() []error }:
		joined = j.Unwrap()
	case interface{ WrappedErrors() []error }:
		joined = j.WrappedErrors()
	default:
		return []error{err}
	}
	var out []error
	for _, e := range joined {
		out = append(out, leaves(e)...)
	}
	return out
}

// structOf is the struct behind an error, value or pointer, or the zero
// Value.
func structOf(e error) reflect.Value {
	v := reflect.ValueOf(e)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v
}

// field is v's exported field name of type T, when v is a struct of the
// type typeName.
func field[T any](v reflect.Value, typeName, name string) (T, bool) {
	var zero T
	if !v.IsValid() || v.Type().Name() != typeName {
		return zero, false
	}
	f := v.FieldByName(name)
	if !f.IsValid() || f.Type() != reflect.TypeFor[T]() || !f.CanInterface() {
		return zero, false
	}
	if f.Kind() == reflect.Interface && f.IsNil() {
		return zero, true
	}
	return f.Interface().(T), true
}
