package locks

import (
	"errors"
	"fmt"
	"testing"

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
