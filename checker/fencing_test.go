package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

func TestFencingWithoutTokensIsNotPretended(t *testing.T) {
	r := run(t, "fencing", newHistory().acquire(1, "k", "a", 0, ms(1), ms(100), 0).build())
	assert.False(t, r.Applicable)
	assert.Contains(t, r.Reason, "no fencing: the lock hands out no fencing tokens")
}

func TestFencingTokenGoingBackwardsIsInvalid(t *testing.T) {
	ops := newHistory().
		acquireFenced(1, "k", "a", 5, ms(0), ms(10), ms(100), 0).
		acquireFenced(2, "k", "b", 3, ms(200), ms(210), ms(100), 0).
		build()
	r := run(t, "fencing", ops)
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, r.Anomalies, 1)
	assert.Equal(t, KindFenceBackwards, r.Anomalies[0].Kind)
	assert.Equal(t, []string{"a", "b"}, r.Anomalies[0].Leases)
}

// The resource rejected the paused holder's stale write: fencing worked.
func TestRejectedStaleWriteIsCounted(t *testing.T) {
	ops := newHistory().
		acquireFenced(1, "k", "a", 1, ms(0), ms(10), ms(100), 0).read(1, "k", "a", 0, ms(20), ms(21)).
		acquireFenced(2, "k", "b", 2, ms(150), ms(160), ms(100), 0).read(2, "k", "b", 0, ms(170), ms(171)).
		write(history.Fail, 1, "k", "a", 1, 0, ms(300), ms(301)).
		build()
	r := run(t, "fencing", ops)
	assert.Equal(t, Valid, r.Verdict, r.Reason)
	assert.Equal(t, int64(1), r.Metrics["stale_writes_rejected"])
	assert.Equal(t, int64(0), r.Metrics["stale_writes_accepted"])
}

// A write under a superseded lease that the resource took before the new
// holder touched it is no fence failure (the resource cannot know yet, and
// the new holder reads what it wrote): counted, not judged.
func TestSupersededWriteBeforeTheSuccessorIsCountedNotFlagged(t *testing.T) {
	ops := newHistory().
		acquireFenced(1, "k", "a", 1, ms(0), ms(10), ms(100), 0).
		acquireFenced(2, "k", "b", 2, ms(150), ms(160), ms(100), 0).
		fencedWrite(history.OK, 1, "k", "a", 1, 1, 0, ms(170), ms(171)).
		fencedRead(2, "k", "b", 2, 1, ms(180), ms(181)).
		build()
	r := run(t, "fencing", ops)
	assert.Equal(t, Valid, r.Verdict, r.Reason)
	assert.Equal(t, int64(1), r.Metrics["superseded_writes_accepted"])
	assert.Equal(t, int64(0), r.Metrics["stale_writes_accepted"])
	assert.Empty(t, r.Anomalies)
}

// The resource acknowledged b's token 2, then took a's write with token 1:
// the stale write slipped past the fence.
func TestStaleWriteAfterANewerTokenIsInvalid(t *testing.T) {
	ops := newHistory().
		acquireFenced(1, "k", "a", 1, ms(0), ms(10), ms(100), 0).fencedRead(1, "k", "a", 1, 0, ms(20), ms(21)).
		acquireFenced(2, "k", "b", 2, ms(150), ms(160), ms(100), 0).fencedRead(2, "k", "b", 2, 0, ms(170), ms(171)).
		fencedWrite(history.OK, 1, "k", "a", 1, 1, 0, ms(300), ms(301)).
		build()
	r := run(t, "fencing", ops)
	assert.Equal(t, Invalid, r.Verdict)
	assert.Equal(t, int64(1), r.Metrics["stale_writes_accepted"])
	require.Len(t, r.Anomalies, 1)
	a := r.Anomalies[0]
	assert.Equal(t, KindStaleWriteAccepted, a.Kind)
	assert.Equal(t, []string{"a", "b"}, a.Leases)
	assert.Contains(t, a.Text, "took lease a's write with token 1 at 300ms, after it had acknowledged lease b's read with token 2 at 171ms")
	assert.Contains(t, r.Reason, "the resource took 1 stale write after it had seen a newer token")
}

// Concurrent with the newer token's access, the resource may have taken
// the old write first: no proof.
func TestStaleWriteConcurrentWithTheNewerTokenIsNoProof(t *testing.T) {
	ops := newHistory().
		acquireFenced(1, "k", "a", 1, ms(0), ms(10), ms(100), 0).
		acquireFenced(2, "k", "b", 2, ms(150), ms(160), ms(100), 0).fencedRead(2, "k", "b", 2, 0, ms(170), ms(180)).
		fencedWrite(history.OK, 1, "k", "a", 1, 1, 0, ms(175), ms(176)).
		build()
	assert.Equal(t, Valid, run(t, "fencing", ops).Verdict)
}

// Lease a was granted after its own lease ran out, its token drawn after
// b's: the tokens put a after b, the holds b after a. The resource would
// take a's stale writes and refuse b's.
func TestTokenDrawnAfterTheNextHoldersIsOutOfOrder(t *testing.T) {
	ops := newHistory().
		acquireFenced(1, "k", "a", 2, ms(0), ms(150), ms(100), 0).
		acquireFenced(2, "k", "b", 1, ms(110), ms(120), ms(100), 0).
		build()
	r := run(t, "fencing", ops)
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, r.Anomalies, 1)
	a := r.Anomalies[0]
	assert.Equal(t, KindFenceOrder, a.Kind)
	assert.Equal(t, []string{"a", "b"}, a.Leases)
	assert.Contains(t, a.Text, "lease a held it until 100ms with fencing token 2, before lease b held it from 120ms with token 1")
	assert.Equal(t, int64(1), r.Metrics["fence_out_of_order"])
	assert.Contains(t, r.Reason, "1 earlier hold carried a token no lower than a later holder's")
}

// The same late grant with the tokens in the order of the holds, and two
// holds that overlap (a double hold, not a fence's to judge) with tokens
// that no real-time order asks to grow: both legal for the fence.
func TestTokensThatFollowTheHoldsAreInOrder(t *testing.T) {
	late := newHistory().
		acquireFenced(1, "k", "a", 1, ms(0), ms(150), ms(100), 0).
		acquireFenced(2, "k", "b", 2, ms(110), ms(120), ms(100), 0).
		build()
	r := run(t, "fencing", late)
	assert.Equal(t, Valid, r.Verdict, r.Reason)
	assert.Empty(t, r.Anomalies)

	overlapping := newHistory().
		acquireFenced(1, "k", "a", 2, ms(0), ms(10), ms(100), 0).
		acquireFenced(2, "k", "b", 1, ms(5), ms(50), ms(100), 0).
		build()
	r = run(t, "fencing", overlapping)
	assert.Equal(t, Valid, r.Verdict, r.Reason)
	assert.Empty(t, r.Anomalies)
}
