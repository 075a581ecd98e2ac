package redsyncanswer_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/locks/adapters/redsyncanswer"
)

// The errors of old versions, made by hand: the module's own redsync is
// v4.18.1.

// multiError is hashicorp's *multierror.Error, which v4 returned until
// v4.17.0.
type multiError struct{ errs []error }

func (m *multiError) Error() string {
	var s []string
	for _, e := range m.errs {
		s = append(s, e.Error())
	}
	return fmt.Sprintf("%d errors occurred: %s", len(m.errs), strings.Join(s, "; "))
}
func (m *multiError) WrappedErrors() []error { return m.errs }

func multi(errs ...error) error { return &multiError{errs} }

// RedisError is v4.7.0-v4.12.x's: no Unwrap (v4.7.x returned it as a value).
type RedisError struct {
	Node int
	Err  error
}

func (e RedisError) Error() string { return fmt.Sprintf("node #%d: %s", e.Node, e.Err) }

// reply is an error reply as go-redis returns it.
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

var (
	dialRefused = &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	readTimeout = &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	noReplicas  = reply("NOREPLICAS Not enough good replicas to write.")
	// v4.0.x's ErrFailed, made by its message.
	oldFailed = errors.New("redsync: failed to acquire lock")
)

func node(i int, err error) error { return &redsync.RedisError{Node: i, Err: err} }

type outcome string

const (
	refused  outcome = "a refusal"
	undone   outcome = "taken and given back"
	noEffect outcome = "no effect"
	notHeld  outcome = "not held"
	unknown  outcome = "unknown"
	done     outcome = "done"
)

func acquireOutcome(err error) outcome {
	switch {
	case err == nil:
		return done
	case !locks.Failed(err):
		return unknown
	case !errors.Is(err, locks.ErrNotAcquired):
		return outcome("not an acquire's failure: " + err.Error())
	case errors.Is(err, locks.ErrUndone):
		if locks.Refused(err) {
			return "undone yet refused"
		}
		return undone
	case locks.Refused(err):
		return refused
	}
	return noEffect
}

func heldOutcome(err error) outcome {
	switch {
	case err == nil:
		return done
	case !locks.Failed(err):
		return unknown
	case errors.Is(err, locks.ErrNotHeld) && !errors.Is(err, locks.ErrNoEffect):
		return notHeld
	case errors.Is(err, locks.ErrNoEffect) && !errors.Is(err, locks.ErrNotHeld):
		return noEffect
	}
	return outcome("neither not held nor no effect: " + err.Error())
}

func TestAcquire(t *testing.T) {
	for _, c := range []struct {
		name    string
		err     error
		ctxErr  error
		masters int
		late    bool
		want    outcome
	}{
		{"one master said taken, v4.7.0 on", &redsync.ErrTaken{Nodes: []int{0}}, nil, 1, false, refused},
		{"one master said taken, v4.7.x (a value)", redsync.ErrTaken{Nodes: []int{0}}, nil, 1, false, refused},
		{"one master said taken, up to v4.6.x", oldFailed, nil, 1, false, refused},
		{"one master took it too late", redsync.ErrFailed, nil, 1, true, undone},
		{"every master said taken", &redsync.ErrTaken{Nodes: []int{2, 0, 1}}, nil, 3, false, refused},
		{"a quorum said taken, the third's answer dropped", &redsync.ErrTaken{Nodes: []int{0, 2}}, nil, 3, false, undone},
		{"one of three took it, given back", errors.Join(&redsync.ErrNodeTaken{Node: 1}, node(2, dialRefused)), nil, 3, false, undone},
		{"two of five took it, given back, v4.8.0-v4.16.x", multi(&redsync.ErrNodeTaken{Node: 1}, &redsync.ErrNodeTaken{Node: 3}, node(4, dialRefused)), nil, 5, false, undone},
		{"every master took it too late, v4.7.0 on", redsync.ErrFailed, nil, 3, true, undone},
		{"three masters, ErrFailed in time, up to v4.6.x", oldFailed, nil, 3, false, undone},
		{"a timeout on one of three masters", errors.Join(&redsync.ErrNodeTaken{Node: 0}, node(1, readTimeout)), nil, 3, false, unknown},
		{"a timeout on one of three masters, up to v4.6.x", multi(readTimeout), nil, 3, false, unknown},
		{"a timeout, v4.7.x", multi(RedisError{1, context.DeadlineExceeded}), nil, 3, false, unknown},
		{"the context ended between tries", redsync.ErrFailed, context.DeadlineExceeded, 1, false, unknown},
		{"the context ended, every master said taken", &redsync.ErrTaken{Nodes: []int{0}}, context.Canceled, 1, false, unknown},
		{"the only master unreachable", errors.Join(node(0, dialRefused)), nil, 1, false, noEffect},
		{"the only master unreachable, up to v4.6.x", multi(dialRefused), nil, 1, false, noEffect},
		{"the only master unreachable, v4.7.0-v4.12.x", multi(&RedisError{0, dialRefused}), nil, 1, false, noEffect},
		{"every master unreachable", errors.Join(node(0, dialRefused), node(1, dialRefused), node(2, dialRefused)), nil, 3, false, noEffect},
		{"one said taken, two unreachable", errors.Join(&redsync.ErrNodeTaken{Node: 0}, node(1, dialRefused), node(2, dialRefused)), nil, 3, false, noEffect},
		{"one unreachable, the others not named, up to v4.6.x", multi(dialRefused), nil, 3, false, undone},
		{"NOREPLICAS in a RedisError without Unwrap", multi(RedisError{0, noReplicas}), nil, 1, false, noEffect},
		{"an error redsync did not get from a master", errors.New("crypto/rand: no entropy"), nil, 1, false, unknown},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := redsyncanswer.Acquire(c.err, c.ctxErr, c.masters, !c.late)
			require.Equal(t, c.want, acquireOutcome(err), "%v", err)
			require.ErrorContains(t, err, c.err.Error(), "redsync's own answer is kept")
		})
	}
	require.NoError(t, redsyncanswer.Acquire(nil, nil, 1, true))
}

// A cause that proves nothing reached a master stays findable through a
// RedisError that cannot be unwrapped.
func TestAcquireKeepsTheCauses(t *testing.T) {
	err := redsyncanswer.Acquire(multi(RedisError{0, dialRefused}), nil, 1, true)
	require.True(t, locks.NotSent(err), "%v", err)
	err = redsyncanswer.Acquire(multi(RedisError{0, noReplicas}), nil, 1, true)
	require.True(t, locks.NoReplicas(err), "%v", err)
}

func TestHeld(t *testing.T) {
	expired := redsync.ErrLockAlreadyExpired
	for _, c := range []struct {
		name    string
		ok      bool
		err     error
		masters int
		want    outcome
	}{
		{"released on a quorum", true, errors.Join(&redsync.ErrNodeTaken{Node: 2}), 3, done},
		{"the key gone on the only master, v4.12.0 on", false, errors.Join(expired), 1, notHeld},
		{"another's key on the only master, v4.7.0 on", false, &redsync.ErrTaken{Nodes: []int{0}}, 1, notHeld},
		{"the only master said no, up to v4.6.x", false, nil, 1, notHeld},
		{"every master another's", false, &redsync.ErrTaken{Nodes: []int{0, 1, 2}}, 3, notHeld},
		{"two gone, one unreachable", false, errors.Join(expired, expired, node(2, dialRefused)), 3, notHeld},
		{"released on one of three, the others gone", false, errors.Join(expired, expired), 3, unknown},
		{"a quorum another's, the third's answer dropped", false, &redsync.ErrTaken{Nodes: []int{0, 1}}, 3, unknown},
		{"three masters said false, up to v4.6.x", false, nil, 3, unknown},
		{"one of three unreachable, up to v4.6.x", false, multi(dialRefused), 3, unknown},
		{"a timeout on the only master", false, errors.Join(node(0, readTimeout)), 1, unknown},
		{"a timeout on one of three, v4.7.0-v4.16.x", false, multi(&redsync.ErrNodeTaken{Node: 0}, RedisError{1, readTimeout}), 3, unknown},
		{"the only master unreachable", false, errors.Join(node(0, dialRefused)), 1, noEffect},
		{"the only master unreachable, up to v4.6.x", false, multi(dialRefused), 1, noEffect},
		{"every master unreachable, up to v4.6.x", false, multi(dialRefused, dialRefused, dialRefused), 3, noEffect},
		{"one gone, two unreachable", false, errors.Join(expired, node(1, dialRefused), node(2, dialRefused)), 3, noEffect},
		{"extended on a quorum too late", false, redsync.ErrExtendFailed, 3, unknown},
		{"extended on the only master too late", false, redsync.ErrExtendFailed, 1, unknown},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := redsyncanswer.Held("unlock", c.ok, c.err, c.masters)
			require.Equal(t, c.want, heldOutcome(err), "%v", err)
			if c.err != nil && !c.ok {
				require.ErrorContains(t, err, c.err.Error(), "redsync's own answer is kept")
			}
		})
	}
}

// A release that took effect on some masters says on how many.
func TestHeldSaysWhereItTookEffect(t *testing.T) {
	expired := redsync.ErrLockAlreadyExpired
	err := redsyncanswer.Held("unlock", false, errors.Join(expired, expired, expired, expired), 5)
	require.ErrorContains(t, err, "redsync unlock: took effect on 1 of 5 masters, fewer than a quorum")
	err = redsyncanswer.Held("extend", false, nil, 5)
	require.ErrorContains(t, err, "redsync extend: may have taken effect on up to 2 of 5 masters")
}

func TestInTime(t *testing.T) {
	require.True(t, redsyncanswer.InTime(900*time.Millisecond, time.Second, 0.01))
	require.False(t, redsyncanswer.InTime(990*time.Millisecond, time.Second, 0.01), "the drift is taken off the TTL")
}
