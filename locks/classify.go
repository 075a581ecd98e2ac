package locks

import (
	"context"
	"errors"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The one place where an error from a Redis call is read for what it
// proves about the call's effect. Every lock and adapter maps its calls'
// answers through AcquireResult and HeldResult (or Classify), so that
// "certainly no effect" means the same thing everywhere: a history "fail"
// only when the call surely changed nothing, "info" otherwise.

// Effect is what a call's error proves about what the call did.
type Effect int

const (
	// Answered: Redis ran the call and answered (no error, or a nil
	// reply); what it did is in the reply.
	Answered Effect = iota
	// NoEffect: the call certainly changed nothing. It never reached Redis
	// (NotSent), or Redis turned it away before running it (NoReplicas,
	// NotServed).
	NoEffect
	// Unknown: the call may or may not have taken effect (a timeout, a
	// connection lost after the write, any other error reply).
	Unknown
)

func (e Effect) String() string {
	switch e {
	case Answered:
		return "answered"
	case NoEffect:
		return "no effect"
	}
	return "unknown"
}

// Classify says what err proves about the call that returned it.
func Classify(err error) Effect {
	switch {
	case err == nil || errors.Is(err, redis.Nil):
		return Answered
	case Unapplied(err):
		return NoEffect
	}
	return Unknown
}

// AcquireResult maps the answer of one attempt to take a key onto the Lock
// contract. took says the reply granted the key; it is read only when
// Classify(err) is Answered. The result is nil when taken, ErrNotAcquired
// when Redis said no, ErrNotAcquired joined with err when the call
// certainly had no effect (no refusal: Refused is false), and err itself
// when the outcome is unknown.
func AcquireResult(took bool, err error) error {
	return answer(took, err, ErrNotAcquired, ErrNotAcquired)
}

// HeldResult maps the answer of an owner-checked call on a held lease
// (release, extend, renewal) onto the Lock contract. acted says the reply
// found the key still the lease's and acted on it; it is read only when
// Classify(err) is Answered. The result is nil when it acted, ErrNotHeld
// when the key was no longer the lease's, ErrNoEffect joined with err when
// the call certainly had no effect, and err itself when the outcome is
// unknown.
func HeldResult(acted bool, err error) error {
	return answer(acted, err, ErrNotHeld, ErrNoEffect)
}

// answer maps a call's answer: nil when Redis said yes, no when it said
// no, none joined with err when the call certainly had no effect, err
// itself when its effect is unknown.
func answer(yes bool, err, no, none error) error {
	switch Classify(err) {
	case NoEffect:
		return errors.Join(none, err)
	case Unknown:
		return err
	}
	if !yes {
		return no
	}
	return nil
}

// Failed reports whether err proves the operation had no effect (a history
// "fail"); any other error leaves the outcome unknown ("info").
func Failed(err error) bool {
	return errors.Is(err, ErrNotAcquired) || errors.Is(err, ErrNotHeld) || errors.Is(err, ErrNoEffect)
}

// Refused reports an acquire that failed because the key was taken, as
// opposed to one that could not reach the service, was refused by a master
// short of replicas (NOREPLICAS: the key may well be free), took the key
// and gave it back (ErrUndone) or ran out of time: the difference between
// a lock that stays taken and one that is unavailable.
func Refused(err error) bool {
	if !errors.Is(err, ErrNotAcquired) || errors.Is(err, ErrUndone) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || NoReplicas(err) || NotServed(err) {
		return false
	}
	var op *net.OpError
	return !errors.As(err, &op)
}

// Unapplied reports errors that prove a call had no effect: it never
// reached Redis (NotSent), or Redis refused it before running it
// (NoReplicas, NotServed).
func Unapplied(err error) bool {
	return NotSent(err) || NoReplicas(err) || NotServed(err)
}

// NotSent reports errors that prove a command never reached Redis, such as
// a refused connection: those outcomes are certain, not unknown.
func NotSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// NoReplicas reports Redis's NOREPLICAS reply: a master with fewer good
// replicas than its min-replicas-to-write refused a write before running
// it (in a script, at the script's first write, which aborts it), so the
// call certainly had no effect.
func NoReplicas(err error) bool { return replyIs(err, "NOREPLICAS ") }

// NotServed reports the replies by which a Redis Cluster node turns a
// command away before running it: the slot is elsewhere (MOVED, ASK), the
// cluster is down on that node's view (CLUSTERDOWN), or a migration is
// under way (TRYAGAIN). The call certainly had no effect.
func NotServed(err error) bool {
	return replyIs(err, "MOVED ", "ASK ", "CLUSTERDOWN ", "TRYAGAIN ")
}

func replyIs(err error, prefixes ...string) bool {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return false
	}
	for _, p := range prefixes {
		if strings.HasPrefix(rerr.Error(), p) {
			return true
		}
	}
	return false
}
