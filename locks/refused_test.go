package locks

import (
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
