package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

// redsync's Lock at its defaults tries 32 times: an acquire that waited
// eight seconds behind another holder and was granted by its last try is
// no late yes, when the client says when that try began; the same call
// without the stamp is judged as a single try whose SET may have run at
// its start.
func TestAGrantOfALateTryIsNoLateYes(t *testing.T) {
	granted := func(tried bool) *builder {
		b := newHistory().acquire(1, "k", "a", ms(0), ms(8020), ms(1000), 0)
		if tried {
			b.triedAt(ms(5), ms(8000), ms(8015))
		} else {
			b.stamped(ms(5), ms(8015))
		}
		return b.read(1, "k", "a", 3, ms(8030), ms(8031))
	}
	r, found := badUsesOf(t, granted(true))
	assert.Equal(t, Valid, r.Verdict, "%v", found)
	assert.Empty(t, found)

	r, found = badUsesOf(t, granted(false))
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, found, 1)
	assert.Equal(t, KindLateYesUsed, found[0].Kind)

	// A driver that stamps no call, only its tries (redis-py's): the same.
	b0 := newHistory().acquire(1, "k", "a", ms(0), ms(8020), ms(1000), 0)
	b0.ops[len(b0.ops)-1].Tried = ms(8000)
	_, found = badUsesOf(t, b0.read(1, "k", "a", 3, ms(8030), ms(8031)))
	assert.Empty(t, found)

	// A try that itself took longer than the lease is still late.
	b := newHistory().acquire(1, "k", "a", ms(0), ms(8020), ms(1000), 0).triedAt(ms(5), ms(6000), ms(8015)).
		read(1, "k", "a", 3, ms(8030), ms(8031))
	_, found = badUsesOf(t, b)
	require.Len(t, found, 1)
	assert.Equal(t, ms(2015), found[0].Took, "from the try's start")
}

// A lease granted by the last try of a long acquire runs a TTL from that
// try's start: another grant within it is a double hold. Counted from the
// call's start, the lease would have expired before it was granted, and
// the double hold would be missed.
func TestALeaseRunsFromTheTryThatTookTheKey(t *testing.T) {
	ops := newHistory().
		acquire(1, "k", "a", ms(0), ms(5010), ms(1000), 0).triedAt(ms(1), ms(4900), ms(5005)).
		acquire(2, "k", "b", ms(5400), ms(5410), ms(1000), 0).
		release(history.OK, 1, "k", "a", ms(5600), ms(5610)).
		release(history.OK, 2, "k", "b", ms(5700), ms(5710)).
		build()
	dh := doubleHolds(t, ops)
	require.Len(t, dh, 1, "a's lease runs to 5.9 s, b took the key at 5.41 s")

	ops = newHistory().
		acquire(1, "k", "a", ms(0), ms(5010), ms(1000), 0).stamped(ms(1), ms(5005)).
		acquire(2, "k", "b", ms(5400), ms(5410), ms(1000), 0).
		release(history.OK, 1, "k", "a", ms(5600), ms(5610)).
		release(history.OK, 2, "k", "b", ms(5700), ms(5710)).
		build()
	assert.Empty(t, doubleHolds(t, ops), "without the try's stamp, a's lease is dated from its call and over before its grant")
}

// A try's stamp belongs to an ok acquire, within its call.
func TestATriedStampOutsideItsCallIsRefused(t *testing.T) {
	for _, op := range []history.Op{
		{Type: history.OK, F: history.Acquire, Key: "k", Lease: "a", Owner: "t", Process: 1, Began: ms(10), Ended: ms(20), Tried: ms(5)},
		{Type: history.OK, F: history.Acquire, Key: "k", Lease: "a", Owner: "t", Process: 1, Began: ms(10), Ended: ms(20), Tried: ms(25)},
		{Type: history.Fail, F: history.Acquire, Key: "k", Lease: "a", Owner: "t", Process: 1, Began: ms(10), Ended: ms(20), Tried: ms(15)},
		{Type: history.OK, F: history.Release, Key: "k", Lease: "a", Owner: "t", Process: 1, Began: ms(10), Ended: ms(20), Tried: ms(15)},
	} {
		assert.ErrorContains(t, op.Validate(), "tried", "%+v", op)
	}
	ok := history.Op{Type: history.OK, F: history.Acquire, Key: "k", Lease: "a", Owner: "t", Process: 1, Began: ms(10), Ended: ms(20), Tried: ms(15)}
	assert.NoError(t, ok.Validate())
}
