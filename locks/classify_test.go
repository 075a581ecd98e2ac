package locks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// A refusal means the key was someone else's; an acquire that took the key
// and gave it back is a failure, not a refusal, and liveness must not read
// it as evidence of a stuck key.
func TestRefusedOnlyWhenTheKeyWasTaken(t *testing.T) {
	require.True(t, Refused(ErrNotAcquired))
	require.True(t, Refused(fmt.Errorf("%w: 0 of 5 masters, quorum 3", ErrNotAcquired)))
	require.False(t, Refused(fmt.Errorf("%w: 0 of 1 replicas acknowledged, rolled back (%w)", ErrNotAcquired, ErrUndone)))
	require.False(t, Refused(fmt.Errorf("%w: 2 of 5 masters, quorum 3 (%w)", ErrNotAcquired, ErrUndone)))
	require.True(t, Failed(fmt.Errorf("%w: rolled back (%w)", ErrNotAcquired, ErrUndone)), "still a certain failure")
}

// reply is an error reply as go-redis returns it (a redis.Error).
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

// NOREPLICAS is refused before the command runs: a certain failure (fail,
// not info), and no evidence that the key was taken.
func TestNoReplicasIsACertainFailureAndNoRefusal(t *testing.T) {
	noReplicas := reply("NOREPLICAS Not enough good replicas to write.")
	inScript := reply("NOREPLICAS Not enough good replicas to write. script: 3f8a, on @user_script:3.")
	for _, e := range []error{noReplicas, inScript, fmt.Errorf("bsm: %w", noReplicas)} {
		require.True(t, NoReplicas(e), "%v", e)
		require.True(t, Unapplied(e), "%v", e)
		acquire := errors.Join(ErrNotAcquired, e)
		require.True(t, Failed(acquire))
		require.False(t, Refused(acquire), "a master short of replicas says nothing of the key")
	}
	for _, e := range []error{reply("READONLY You can't write against a read only replica."), errors.New("NOREPLICAS but not a reply"),
		reply("ERR NOREPLICAS inside a message")} {
		require.False(t, NoReplicas(e), "%v", e)
	}
}

// A cluster node that turns a command away (the slot is elsewhere, the
// cluster is down on its view, a migration is under way) ran nothing: a
// certain failure, and no evidence that the key was taken.
func TestARedirectOrClusterDownIsACertainFailureAndNoRefusal(t *testing.T) {
	for _, e := range []error{reply("MOVED 449 redis-4:6379"), reply("ASK 449 redis-2:6379"),
		reply("CLUSTERDOWN The cluster is down"), reply("TRYAGAIN Multiple keys request during rehashing of slot")} {
		require.True(t, NotServed(e), "%v", e)
		require.True(t, Unapplied(e), "%v", e)
		acquire := errors.Join(ErrNotAcquired, e)
		require.True(t, Failed(acquire))
		require.False(t, Refused(acquire), "%v says nothing of the key", e)
	}
	for _, e := range []error{errors.New("CLUSTERDOWN but not a reply"), reply("ERR MOVED inside a message"),
		errors.New("go-redis retried set after an attempt that may have taken effect (EOF); the last attempt gave MOVED 449 redis-4:6379")} {
		require.False(t, NotServed(e), "%v", e)
	}
}

// Every error a lock meets, through the one classifier: what it proves
// (Classify), and what an acquire, a call on a held lease and the
// refusal test make of it. Replies that turn a command away but are not
// yet known to the classifier (READONLY, LOADING, NOSCRIPT, BUSY) stay
// unknown: that is never wrong, only less precise.
func TestClassify(t *testing.T) {
	dialRefused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	readTimeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	const (
		taken   = "refused"   // AcquireResult: ErrNotAcquired, a refusal
		unsent  = "no-effect" // AcquireResult: ErrNotAcquired, no refusal
		unknown = "unknown"   // AcquireResult: the error itself
	)
	for _, c := range []struct {
		name    string
		err     error
		effect  Effect
		acquire string // of AcquireResult(false, err)
	}{
		{"redis.Nil", redis.Nil, Answered, taken},
		{"context deadline", context.DeadlineExceeded, Unknown, unknown},
		{"context canceled", context.Canceled, Unknown, unknown},
		{"i/o timeout", readTimeout, Unknown, unknown},
		{"wrapped i/o timeout", fmt.Errorf("bsm: %w", readTimeout), Unknown, unknown},
		{"EOF", io.EOF, Unknown, unknown},
		{"connection refused", dialRefused, NoEffect, unsent},
		{"wrapped connection refused", fmt.Errorf("redis: %w", dialRefused), NoEffect, unsent},
		{"NOREPLICAS", reply("NOREPLICAS Not enough good replicas to write."), NoEffect, unsent},
		{"MOVED", reply("MOVED 449 redis-4:6379"), NoEffect, unsent},
		{"ASK", reply("ASK 449 redis-2:6379"), NoEffect, unsent},
		{"CLUSTERDOWN", reply("CLUSTERDOWN The cluster is down"), NoEffect, unsent},
		{"TRYAGAIN", reply("TRYAGAIN Multiple keys request during rehashing of slot"), NoEffect, unsent},
		{"READONLY", reply("READONLY You can't write against a read only replica."), Unknown, unknown},
		{"NOSCRIPT", reply("NOSCRIPT No matching script. Please use EVAL."), Unknown, unknown},
		{"LOADING", reply("LOADING Redis is loading the dataset in memory"), Unknown, unknown},
		{"BUSY", reply("BUSY Redis is busy running a script."), Unknown, unknown},
		{"MOVED only in the text", errors.New("MOVED 449 redis-4:6379"), Unknown, unknown},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.effect, Classify(c.err))

			acquire := AcquireResult(false, c.err)
			switch c.acquire {
			case taken:
				require.ErrorIs(t, acquire, ErrNotAcquired)
				require.True(t, Refused(acquire))
			case unsent:
				require.ErrorIs(t, acquire, ErrNotAcquired)
				require.ErrorIs(t, acquire, c.err, "the cause is kept")
				require.False(t, Refused(acquire), "no evidence that the key was taken")
			case unknown:
				require.Equal(t, c.err, acquire)
				require.False(t, Failed(acquire))
				require.False(t, Refused(acquire))
			}

			held := HeldResult(false, c.err)
			switch c.effect {
			case Answered:
				require.ErrorIs(t, held, ErrNotHeld)
			case NoEffect:
				require.ErrorIs(t, held, ErrNoEffect)
				require.ErrorIs(t, held, c.err)
			case Unknown:
				require.Equal(t, c.err, held)
				require.False(t, Failed(held))
			}
		})
	}
	t.Run("answers", func(t *testing.T) {
		require.Equal(t, Answered, Classify(nil))
		require.NoError(t, AcquireResult(true, nil))
		require.Same(t, ErrNotAcquired, AcquireResult(false, nil))
		require.NoError(t, HeldResult(true, nil))
		require.Same(t, ErrNotHeld, HeldResult(false, nil))
		// took and acted are read only when Redis answered.
		require.ErrorIs(t, AcquireResult(true, dialRefused), ErrNotAcquired)
		require.Same(t, readTimeout, AcquireResult(true, readTimeout))
		require.Same(t, readTimeout, HeldResult(true, readTimeout))
	})
}
