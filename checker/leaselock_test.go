package checker

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

func leaseLock(t *testing.T, b *builder) LeaseLockResult {
	t.Helper()
	r, err := LeaseLock(b.build(), 0)
	require.NoError(t, err)
	return r
}

func TestLeaseLockGrantBeforeExpiryIsIllegal(t *testing.T) {
	// a's client gave up at 50ms (its release failed), so clients never
	// overlap, but the server granted b at 110ms at the latest while a's
	// lease, granted no earlier than 0, lasted at least until 1s.
	b := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
		release(history.Fail, 1, "k", "a", ms(50), ms(60)).
		acquire(2, "k", "b", ms(100), ms(110), ms(1000), ms(1000)).
		acquire(3, "other", "c", ms(0), ms(10), ms(1000), ms(1000))
	assert.Empty(t, doubleHolds(t, b.build()), "the sweep cannot see this one")

	r := leaseLock(t, b)
	assert.Equal(t, Invalid, r.Verdict)
	assert.Equal(t, []string{"k"}, r.FailedKeys)
	require.Len(t, r.Anomalies, 1)
	assert.Contains(t, r.Anomalies[0], `key "k" has no legal lease-lock order`)
	assert.Contains(t, r.Anomalies[0], "held by a, expiring between 1s and 1.01s")
	assert.Contains(t, r.Anomalies[0], "process 2 acquire of lease b ok in [100ms, 110ms]")
	assert.Equal(t, 2, r.Keys)
	assert.Equal(t, 3, r.Operations, "the failed release changes nothing and is not searched")
}

func TestLeaseLockInfoAcquireDoesNotExcuseAnEarlyGrant(t *testing.T) {
	// c's acquire may have taken effect at any time, even over a's lease,
	// but then no earlier than a's lease could expire (1.5s): it cannot
	// make b's grant at 610ms legal. (c's failed release keeps its acquire
	// in the check.)
	r := leaseLock(t, newHistory().
		acquireAs(history.Info, 3, "k", "c", ms(0), ms(10), ms(100)).next(4).
		acquire(1, "k", "a", ms(500), ms(510), ms(1000), ms(1490)).
		acquire(2, "k", "b", ms(600), ms(610), ms(1000), ms(1590)).
		release(history.Fail, 4, "k", "c", ms(700), ms(710)))
	assert.Equal(t, Invalid, r.Verdict)
}

func TestLeaseLockManyInfoAcquiresStayTractable(t *testing.T) {
	// Timed-out acquires pile up during faults, exactly when violations
	// happen; they must not turn an Invalid into a timeout.
	b := newHistory()
	for i := int64(0); i < 40; i++ {
		b.acquireAs(history.Info, 100+int(i), "k", fmt.Sprintf("x%d", i), ms(i), ms(i+5), ms(100))
	}
	b.acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
		acquire(2, "k", "b", ms(100), ms(110), ms(1000), ms(1090))
	r, err := LeaseLock(b.build(), DefaultModelSteps)
	require.NoError(t, err)
	assert.Equal(t, Invalid, r.Verdict)
	assert.Equal(t, 2, r.Operations, "inert info acquires are left out")
}

func TestLeaseLockExplainsIllegalFirstOperation(t *testing.T) {
	r := leaseLock(t, newHistory().release(history.OK, 1, "k", "a", ms(0), ms(10)))
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, r.Anomalies, 1)
	assert.Contains(t, r.Anomalies[0], "no operation can come first from a free lock")
	assert.Contains(t, r.Anomalies[0], "process 1 release of lease a ok in [0s, 10ms]")
}

func TestLeaseLockReleaseOfALostLeaseIsIllegal(t *testing.T) {
	// a's lease expired and b took the lock: a's token is gone, so a
	// release that reports ok deleted b's lock.
	r := leaseLock(t, newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
		acquire(2, "k", "b", ms(150), ms(160), ms(100), ms(240)).
		release(history.OK, 1, "k", "a", ms(170), ms(180)))
	assert.Equal(t, Invalid, r.Verdict)
	assert.Contains(t, r.Anomalies[0], "held by b")
}

func TestLeaseLockRenewalExtendsTheLease(t *testing.T) {
	base := func() *builder {
		return newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			renew(1, "k", "a", ms(80), ms(90), ms(100), ms(170))
	}
	// Renewed at 80ms at the earliest: a's lease lasts until 180ms at least.
	assert.Equal(t, Invalid, leaseLock(t, base().acquire(2, "k", "b", ms(150), ms(160), ms(100), ms(240))).Verdict)
	assert.Equal(t, Valid, leaseLock(t, base().acquire(2, "k", "b", ms(170), ms(180), ms(100), ms(260))).Verdict)
	// A renewal by someone who does not hold the key cannot succeed.
	assert.Equal(t, Invalid, leaseLock(t, newHistory().renew(1, "k", "a", ms(0), ms(10), ms(100), ms(90))).Verdict)
}

func TestLeaseLockLegalHistories(t *testing.T) {
	cases := map[string]*builder{
		"expired lease then another acquire": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			acquire(2, "k", "b", ms(150), ms(160), ms(100), ms(240)),
		// b's grant may have happened at 100ms, exactly when a's lease may have expired.
		"grant at the earliest expiry": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			acquire(2, "k", "b", ms(20), ms(100), ms(100), ms(110)),
		"sequential handoffs": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			release(history.OK, 1, "k", "a", ms(20), ms(30)).
			acquire(2, "k", "b", ms(25), ms(40), ms(1000), ms(1020)).
			release(history.OK, 2, "k", "b", ms(50), ms(60)).
			acquire(1, "k", "c", ms(45), ms(70), ms(1000), ms(1040)).
			release(history.OK, 1, "k", "c", ms(80), ms(90)),
		"different keys": newHistory().
			acquire(1, "k1", "a", ms(0), ms(10), ms(1000), ms(990)).
			acquire(2, "k2", "b", ms(0), ms(10), ms(1000), ms(990)),
		// An unknown acquire may never have taken effect.
		"info acquires then another client": newHistory().
			acquireAs(history.Info, 1, "k", "a", ms(0), ms(50), ms(1000)).
			acquireAs(history.Invoke, 3, "k", "c", ms(10), 0, ms(1000)).
			acquire(2, "k", "b", ms(100), ms(110), ms(1000), ms(1090)).
			release(history.OK, 2, "k", "b", ms(200), ms(210)),
		// An unknown acquire may also take effect late, after b released.
		"info acquire taking effect late": newHistory().
			acquireAs(history.Info, 1, "k", "a", ms(0), ms(50), ms(1000)).next(4).
			acquire(2, "k", "b", ms(100), ms(110), ms(1000), ms(1090)).
			release(history.OK, 2, "k", "b", ms(200), ms(210)).
			release(history.OK, 4, "k", "a", ms(300), ms(310)),
		// "Not ours": a's lease had expired by the time it released.
		"failed release then another acquire": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			release(history.Fail, 1, "k", "a", ms(120), ms(130)).
			acquire(2, "k", "b", ms(140), ms(150), ms(100), ms(230)),
		"info release then another acquire": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			release(history.Info, 1, "k", "a", ms(20), ms(30)).
			acquire(2, "k", "b", ms(40), ms(50), ms(1000), ms(1030)),
		"failed acquires while held": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			acquireAs(history.Fail, 2, "k", "b", ms(20), ms(30), ms(1000)).
			release(history.OK, 1, "k", "a", ms(40), ms(50)),
		"same owner renewals": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			renew(1, "k", "a", ms(50), ms(60), ms(100), ms(140)).
			renew(1, "k", "a", ms(100), ms(110), ms(100), ms(190)).
			release(history.OK, 1, "k", "a", ms(150), ms(160)).
			acquire(2, "k", "b", ms(155), ms(170), ms(100), ms(250)),
		"concurrent acquire and release": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			release(history.OK, 1, "k", "a", ms(20), ms(40)).
			acquire(2, "k", "b", ms(15), ms(30), ms(1000), ms(1000)),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			r := leaseLock(t, b)
			assert.Equal(t, Valid, r.Verdict, "%v", r.Anomalies)
			assert.Empty(t, r.FailedKeys)
		})
	}
}

func TestStepLeaseInfoKeepsBothOutcomes(t *testing.T) {
	held := leaseState{Held: true, Lease: "a", TTL: ms(100), Granted: ms(0), Earliest: ms(100), Latest: ms(110)}
	in := lockInput{F: history.Release, Key: "k", Lease: "a", Call: ms(20)}
	assert.Equal(t, []any{held, leaseState{Floor: ms(20)}}, stepLease(held, in, lockOutput{Type: history.Info, Return: never}),
		"released no earlier than invoked")
	assert.Equal(t, []any{held}, stepLease(held, in, lockOutput{Type: history.Fail, Return: ms(30)}))
	in.Lease = "b"
	assert.Empty(t, stepLease(held, in, lockOutput{Type: history.OK, Return: ms(30)}))
	assert.Equal(t, []any{held}, stepLease(held, in, lockOutput{Type: history.Info, Return: never}))

	acq := lockInput{F: history.Acquire, Key: "k", Lease: "b", TTL: ms(100), Call: ms(20)}
	// b's grant cannot precede a's earliest expiry, so b's lease is dated from there.
	assert.Equal(t, []any{held, leaseState{Held: true, Lease: "b", TTL: ms(100), Granted: ms(100), Earliest: ms(200), Latest: never, Floor: ms(100)}},
		stepLease(held, acq, lockOutput{Type: history.Info, Return: never}))
}

// A state reached late bounds what can follow it: an operation that
// returned before the key can have reached the state cannot come next.
func TestStepLeaseNothingFollowsAStateItEndedBefore(t *testing.T) {
	free := leaseState{Floor: ms(1000)} // freed no earlier than 1s
	acq := lockInput{F: history.Acquire, Key: "k", Lease: "b", TTL: ms(100), Call: ms(20)}
	assert.Empty(t, stepLease(free, acq, lockOutput{Type: history.OK, Return: ms(80)}))
	assert.Len(t, stepLease(free, acq, lockOutput{Type: history.OK, Return: ms(1080)}), 1)

	held := leaseState{Held: true, Lease: "b", TTL: ms(100), Granted: ms(1000), Earliest: ms(1100), Latest: ms(1100), Floor: ms(1000)}
	rel := lockInput{F: history.Release, Key: "k", Lease: "b", Call: ms(20)}
	assert.Empty(t, stepLease(held, rel, lockOutput{Type: history.OK, Return: ms(80)}))
	ren := lockInput{F: history.Renew, Key: "k", Lease: "b", TTL: ms(100), Call: ms(20)}
	assert.Empty(t, stepLease(held, ren, lockOutput{Type: history.OK, Return: ms(80)}))
}

// Leases whose acquires and releases all timed out may each take the key
// and give it back at any later time, but never before a grant that
// returned: they cannot excuse b's grant inside a's lease. (Before states
// kept a floor, an unknown release dated after a's expiry freed the key
// for b, which had answered long before.)
func TestLeaseLockUnknownHandoffsDoNotExcuseAnEarlyGrant(t *testing.T) {
	r, err := LeaseLock(hardKey(3), DefaultModelSteps)
	require.NoError(t, err)
	assert.Equal(t, Invalid, r.Verdict)
}

// bigHistory is a legal history large enough that porcupine cannot finish
// it in one step: clients take turns on a few keys while others'
// acquires keep failing.
func bigHistory(rounds int) []history.Op {
	b := newHistory()
	for i := 0; i < rounds; i++ {
		t0 := ms(int64(i) * 10)
		key := fmt.Sprintf("k%d", i%3)
		p := i % 7
		owner := fmt.Sprintf("o%d", i)
		b.acquire(p, key, owner, t0, t0+ms(2), ms(1000), t0+ms(990)).
			release(history.OK, p, key, owner, t0+ms(3), t0+ms(4)).
			acquireAs(history.Fail, 10+p, key, owner+"x", t0, t0+ms(9), ms(1000))
	}
	return b.build()
}

func TestLeaseLockBudgetSpentIsUnknown(t *testing.T) {
	ops := bigHistory(3000)
	r, err := LeaseLock(ops, 1)
	require.NoError(t, err)
	assert.Equal(t, Unknown, r.Verdict)
	assert.Empty(t, r.FailedKeys)

	// A budget of 0 is no limit.
	r, err = LeaseLock(ops, 0)
	require.NoError(t, err)
	assert.Equal(t, Valid, r.Verdict)
}

func TestLeaseLockVisualization(t *testing.T) {
	b := newHistory().
		fault("isolate-primary", "redis-1", ms(50), ms(120)).
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(50)).
		acquire(2, "k", "b", ms(100), ms(110), ms(1000), ms(1000))
	r := leaseLock(t, b)
	var buf bytes.Buffer
	require.NoError(t, r.WriteVisualization(&buf))
	assert.Contains(t, buf.String(), "<html")
	assert.Contains(t, buf.String(), "isolate-primary(redis-1)")
	assert.Contains(t, buf.String(), "acquire a")

	assert.Error(t, LeaseLockResult{}.WriteVisualization(&buf))
}
