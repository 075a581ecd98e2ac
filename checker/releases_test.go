package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

func badReleasesOf(t *testing.T, b *builder) (Result, []BadRelease) {
	t.Helper()
	r := run(t, "releases", b.build())
	return r, r.Details.([]BadRelease)
}

func TestReleaseOfALeaseNeverGrantedIsItsOwnAnomaly(t *testing.T) {
	b := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
		release(history.OK, 2, "k", "x", ms(20), ms(30)). // x never acquired k
		release(history.OK, 1, "k", "a", ms(40), ms(50))
	r, found := badReleasesOf(t, b)
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, found, 1)
	assert.True(t, found[0].NeverGranted)
	assert.Equal(t, "x", found[0].Lease)
	require.Len(t, r.Anomalies, 1)
	assert.Equal(t, KindReleaseNotHeld, r.Anomalies[0].Kind)
	assert.Contains(t, r.Anomalies[0].Text, "an impossible release")

	rep := Check(b.build(), Options{})
	assert.Equal(t, Invalid, rep.Verdict)
	dh, _ := rep.Check("double-holds")
	assert.Equal(t, Valid, dh.Verdict, "not a double hold")
	assert.NotContains(t, rep.Reason, "mutual exclusion")
	assert.Contains(t, rep.Reason, "released what it did not hold")
}

// A plain-DEL release: a's lease ran out, b took the key, and a's late
// release succeeded while b held it. Nobody held the key twice.
func TestReleaseThatRemovedAnotherLeasesLock(t *testing.T) {
	b := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
		acquire(2, "k", "b", ms(150), ms(160), ms(1000), ms(1150)).
		release(history.OK, 1, "k", "a", ms(300), ms(310)).
		release(history.OK, 2, "k", "b", ms(500), ms(510))
	r, found := badReleasesOf(t, b)
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, found, 1)
	assert.False(t, found[0].NeverGranted)
	require.NotNil(t, found[0].Holder)
	assert.Equal(t, "b", found[0].Holder.Lease)
	assert.Equal(t, []string{"a", "b"}, r.Anomalies[0].Leases)
	assert.Contains(t, r.Anomalies[0].Text, "said ok of someone else's lock")
	assert.Empty(t, doubleHolds(t, b.build()))
}

// A release sent while its lease held, to a client stopped until after the
// lease ran out and another took the key: the client began it then (its
// stamp), and its ok removed (or claims to have removed) the other's lock.
func TestReleaseBegunAfterItsLeaseIsJudgedWhenBegun(t *testing.T) {
	b := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
		acquire(2, "k", "b", ms(150), ms(160), ms(1000), ms(1150)).
		release(history.OK, 1, "k", "a", ms(50), ms(310)).stamped(ms(300), ms(305)).
		release(history.OK, 2, "k", "b", ms(500), ms(510))
	r, found := badReleasesOf(t, b)
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, found, 1)
	require.NotNil(t, found[0].Holder)
	assert.Equal(t, "b", found[0].Holder.Lease)
	assert.Contains(t, r.Anomalies[0].Text, "between 300ms and 310ms")
}

// Look-alikes that are legal, or someone else's to report.
func TestReleasesThatHeldOrMayHaveHeldPass(t *testing.T) {
	for name, b := range map[string]*builder{
		// The server may keep a's lease past the harness's window; nobody
		// else took the key, so the late release may have found it.
		"late release, key free": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			release(history.OK, 1, "k", "a", ms(300), ms(310)),
		// An owner-checked lock refuses the late release: as it should.
		"late release refused": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			acquire(2, "k", "b", ms(150), ms(160), ms(1000), ms(1150)).
			release(history.Fail, 1, "k", "a", ms(300), ms(310)),
		// a's acquire timed out but may have taken effect.
		"info acquire": newHistory().
			acquireAs(history.Info, 1, "k", "a", ms(0), ms(10), ms(100)).
			release(history.OK, 1, "k", "a", ms(20), ms(30)),
		// a and b both held k (a double hold, reported as such); a's
		// release was its own.
		"double hold": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			acquire(2, "k", "b", ms(20), ms(30), ms(1000), ms(1020)).
			release(history.OK, 1, "k", "a", ms(100), ms(110)),
		// Sent and begun while a held: it may have taken effect then.
		"begun while held": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			acquire(2, "k", "b", ms(150), ms(160), ms(1000), ms(1150)).
			release(history.OK, 1, "k", "a", ms(50), ms(310)).stamped(ms(60), ms(305)),
		// Handoffs in order.
		"sequential": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			release(history.OK, 1, "k", "a", ms(20), ms(30)).
			acquire(2, "k", "b", ms(40), ms(50), ms(1000), ms(1040)).
			release(history.OK, 2, "k", "b", ms(60), ms(70)),
	} {
		r, found := badReleasesOf(t, b)
		assert.Equal(t, Valid, r.Verdict, "%s: %v", name, found)
	}
}
