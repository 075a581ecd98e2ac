package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/deadbolt-lab/deadbolt/history"
)

// nested: client 1 holds k under p1.1 and re-enters it under p1.2 (the
// lock's token is the same, as Redisson's is), releases the inner lease,
// then the outer; client 2 takes k after.
func nested() *builder {
	return newHistory().
		acquire(1, "k", "p1.1", ms(0), ms(10), ms(1000), 0).token("t1").
		acquire(1, "k", "p1.2", ms(20), ms(30), ms(1000), 0).token("t1").
		release(history.OK, 1, "k", "p1.2", ms(200), ms(210)).
		release(history.OK, 1, "k", "p1.1", ms(300), ms(310)).
		acquire(2, "k", "p2.1", ms(320), ms(330), ms(1000), 0).
		release(history.OK, 2, "k", "p2.1", ms(400), ms(410))
}

// A reentrant lock's holder that acquires its key again holds it once more:
// no double hold, a legal order with a hold count, no queue jumped. The
// same history from a lock without re-entry is a double hold, as before.
func TestReentryIsOneHoldForAReentrantLock(t *testing.T) {
	r := Check(nested().build(), Options{Reentrant: true, MinAcquires: 1})
	assert.Equal(t, Valid, r.Verdict, r.Reason)
	assert.Empty(t, r.Anomalies)
	assert.Equal(t, 1, r.Stats.Reentries, "p1.2 is a re-entry")

	r = Check(nested().build(), Options{MinAcquires: 1})
	assert.Equal(t, Invalid, r.Verdict, r.Reason)
	assert.Contains(t, kinds(r.Anomalies), KindDoubleHold)
}

// Another client's grant while the holder still holds once is a double
// hold, however many holds it gave back; and the key is free only after
// the last release.
func TestAReentrantHoldEndsAtItsLastRelease(t *testing.T) {
	early := newHistory().
		acquire(1, "k", "p1.1", ms(0), ms(10), ms(1000), 0).token("t1").
		acquire(1, "k", "p1.2", ms(20), ms(30), ms(1000), 0).token("t1").
		release(history.OK, 1, "k", "p1.2", ms(200), ms(210)).
		acquire(2, "k", "p2.1", ms(250), ms(260), ms(1000), 0).
		release(history.OK, 1, "k", "p1.1", ms(300), ms(310))
	r := Check(early.build(), Options{Reentrant: true, MinAcquires: 1})
	assert.Equal(t, Invalid, r.Verdict, r.Reason)
	assert.Contains(t, kinds(r.Anomalies), KindDoubleHold)
	assert.Contains(t, kinds(r.Anomalies), KindNoLegalOrder, "one release of two does not free the key")
}

// A re-entry resets the key's TTL on the server, so the outer lease is
// held until the re-entry's invocation + TTL: a grant to another client
// before then is a double hold that a window from the outer acquire alone
// would miss.
func TestAReentryExtendsTheHoldersLease(t *testing.T) {
	extended := newHistory().
		acquire(1, "k", "p1.1", ms(0), ms(10), ms(100), 0).token("t1").
		acquire(1, "k", "p1.2", ms(80), ms(85), ms(100), 0).token("t1").
		release(history.OK, 1, "k", "p1.2", ms(90), ms(95)).
		acquire(2, "k", "p2.1", ms(150), ms(160), ms(100), 0)
	r := Check(extended.build(), Options{Reentrant: true, MinAcquires: 1})
	assert.Equal(t, Invalid, r.Verdict, r.Reason)
	for _, a := range r.Anomalies {
		if a.Kind == KindDoubleHold {
			assert.ElementsMatch(t, []string{"p1.1", "p2.1"}, a.Leases, "the outer lease, extended by the re-entry, overlaps p2.1")
		}
	}
	// Without the re-entry's reset, p1.1 ran out at 100ms: no double hold.
	r = Check(newHistory().
		acquire(1, "k", "p1.1", ms(0), ms(10), ms(100), 0).token("t1").
		acquire(2, "k", "p2.1", ms(150), ms(160), ms(100), 0).build(), Options{Reentrant: true, MinAcquires: 1})
	assert.Equal(t, Valid, r.Verdict, r.Reason)
}

// A client that went on under a new id after an unknown outcome is still
// the same client: its re-entry is no double hold.
func TestAReentryBySuccessorIsTheSameClient(t *testing.T) {
	b := newHistory().
		acquire(1, "k", "p1.1", ms(0), ms(10), ms(1000), 0).token("t1").
		call(history.Op{Time: ms(20), Process: 1, F: history.Read, Key: "k", Lease: "p1.1"}, history.Info, ms(40), nil).next(5).
		acquire(5, "k", "p5.1", ms(50), ms(60), ms(1000), 0).token("t1").
		release(history.OK, 5, "k", "p5.1", ms(100), ms(110)).
		release(history.OK, 5, "k", "p1.1", ms(200), ms(210))
	r := Check(b.build(), Options{Reentrant: true, MinAcquires: 1})
	assert.NotContains(t, kinds(r.Anomalies), KindDoubleHold, r.Reason)
	assert.NotContains(t, kinds(r.Anomalies), KindNoLegalOrder, r.Reason)
}

// A client whose hold expired (its release failed: not held) acquires the
// key afresh later, gives it back, and another client takes it: legal. The
// model took the later acquire for a re-entry of the expired hold, which
// kept the key held after the release (fair-failover under stress, seed 3:
// no legal order, invalid). While the hold may still be live, the same
// pattern is a re-entry and the other client's grant is illegal.
func TestAFreshAcquireAfterTheHoldExpiredIsNoReentry(t *testing.T) {
	expired := newHistory().
		acquire(1, "k", "p1.1", ms(0), ms(10), ms(100), 0).token("t1").
		release(history.Fail, 1, "k", "p1.1", ms(200), ms(210)).
		acquire(1, "k", "p1.2", ms(300), ms(310), ms(100), 0).token("t2").
		release(history.OK, 1, "k", "p1.2", ms(320), ms(330)).
		acquire(2, "k", "p2.1", ms(340), ms(350), ms(100), 0)
	r := Check(expired.build(), Options{Reentrant: true, MinAcquires: 1})
	assert.Equal(t, Valid, r.Verdict, r.Reason)
	assert.Zero(t, r.Stats.Reentries)

	live := newHistory().
		acquire(1, "k", "p1.1", ms(0), ms(10), ms(1000), 0).token("t1").
		acquire(1, "k", "p1.2", ms(300), ms(310), ms(1000), 0).token("t1").
		release(history.OK, 1, "k", "p1.2", ms(320), ms(330)).
		acquire(2, "k", "p2.1", ms(340), ms(350), ms(1000), 0)
	r = Check(live.build(), Options{Reentrant: true, MinAcquires: 1})
	assert.Equal(t, Invalid, r.Verdict, r.Reason)
	assert.Contains(t, kinds(r.Anomalies), KindNoLegalOrder)
}

// The inner release begun (by the client's stamp) a moment after it was
// sent, as every release of a driver that stamps is: the client's outer
// hold is its own, not another's lock it removed.
func TestAStampedInnerReleaseIsTheClientsOwn(t *testing.T) {
	b := newHistory().
		acquire(1, "k", "p1.1", ms(0), ms(10), ms(100), 0).token("t1").
		acquire(1, "k", "p1.2", ms(20), ms(30), ms(100), 0).token("t1").
		release(history.OK, 1, "k", "p1.2", ms(60), ms(80)).stamped(ms(61), ms(79)).
		release(history.OK, 1, "k", "p1.1", ms(90), ms(95)).stamped(ms(91), ms(94))
	r := Check(b.build(), Options{Reentrant: true, MinAcquires: 1})
	assert.Equal(t, Valid, r.Verdict, r.Reason)
	assert.Empty(t, r.Anomalies)
}
