package locks_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/locks"
)

// A try begins at the first SET NX of a round: the other masters' SET NX
// of the same round are the same try, and the give-back after it ends it.
func TestRoundsTellTriesApart(t *testing.T) {
	var tries int
	ctx := locks.WithTried(context.Background(), func() { tries++ })
	var r locks.Rounds
	r.Reset()
	for range 3 { // a round over three masters
		r.Sent(ctx, true)
	}
	require.Equal(t, 1, tries)
	r.Sent(ctx, false) // the give-back
	r.Sent(ctx, false)
	r.Sent(ctx, true) // the next try
	r.Sent(ctx, true)
	require.Equal(t, 2, tries)
	r.Reset()
	r.Sent(ctx, true)
	require.Equal(t, 3, tries, "a new acquire begins a new try")
	r.Sent(context.Background(), false)
	r.Sent(context.Background(), true)
	require.Equal(t, 3, tries, "a command outside an acquire's context tells nobody")
}

// Options.Retry tells each of its tries.
func TestRetryTellsEachTry(t *testing.T) {
	var tries int
	ctx := locks.WithTried(context.Background(), func() { tries++ })
	o := locks.Options{Retries: 2}.WithDefaults()
	_, err := o.Retry(ctx, func() (*locks.Lease, error) { return nil, locks.ErrNotAcquired })
	require.ErrorIs(t, err, locks.ErrNotAcquired)
	require.Equal(t, 3, tries)
}
