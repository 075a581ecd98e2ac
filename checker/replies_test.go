package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

func badRepliesOf(t *testing.T, b *builder) (Result, []BadReply) {
	t.Helper()
	r := run(t, "replies", b.build())
	return r, r.Details.([]BadReply)
}

// redsync v4.0.3's Extend: the holder slept past its lease, nobody took
// the key, and the extend said ok of a key that was gone.
func TestAnExtendAfterTheLeaseRanOutIsFalse(t *testing.T) {
	b := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
		renewVia(history.ViaExtend, history.OK, 1, "k", "a", ms(300), ms(310), ms(100))
	r, found := badRepliesOf(t, b)
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, found, 1)
	assert.Equal(t, KindExtendAfterExpiry, found[0].Kind)
	assert.Equal(t, ms(110), found[0].GoneBy, "the acquire came back at 10ms with a 100ms TTL")
	assert.Contains(t, r.Anomalies[0].Text, "the key was gone")

	// The lock's own watchdog is held to the same.
	b = newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
		renewVia("", history.OK, 5, "k", "a", ms(300), ms(310), ms(100))
	_, found = badRepliesOf(t, b)
	require.Len(t, found, 1)
	assert.Equal(t, KindExtendAfterExpiry, found[0].Kind)
	assert.Equal(t, "watchdog renewal", found[0].Call)
}

// An extend that said ok while another lease held the key, with nothing
// on the nodes to lose it: the first lease's last renewal was unanswered,
// so its key may have lived on, but the other's grant shows it did not.
func TestAnExtendOfAnotherLeasesKeyIsFalse(t *testing.T) {
	b := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
		renewVia(history.ViaExtend, history.Info, 1, "k", "a", ms(50), ms(60), ms(100)).next(3).
		acquire(2, "k", "b", ms(200), ms(210), ms(1000), ms(1190)).
		renewVia(history.ViaExtend, history.OK, 3, "k", "a", ms(300), ms(310), ms(100))
	r, found := badRepliesOf(t, b)
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, found, 1)
	assert.Equal(t, KindExtendNotHeld, found[0].Kind)
	require.NotNil(t, found[0].Holder)
	assert.Equal(t, "b", found[0].Holder.Lease)
	assert.Equal(t, []string{"a", "b"}, r.Anomalies[0].Leases)

	// go-zero v1.3.1's reacquire, answered from a counter in the client.
	b = newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
		acquire(2, "k", "b", ms(200), ms(210), ms(1000), ms(1190)).
		renewVia(history.ViaReacquire, history.OK, 1, "k", "a", ms(300), ms(310), ms(100))
	_, found = badRepliesOf(t, b)
	require.Len(t, found, 1)
	assert.Equal(t, KindReacquireNotHeld, found[0].Kind)
}

// redsync v4.0.3's Unlock after the lease ran out and nobody took the key.
func TestAnUnlockOfAKeyThatWasGoneIsFalse(t *testing.T) {
	b := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
		release(history.OK, 1, "k", "a", ms(300), ms(310))
	r, found := badRepliesOf(t, b)
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, found, 1)
	assert.Equal(t, KindReleaseAfterExpiry, found[0].Kind)
	assert.Equal(t, "unlock", found[0].Call)
}

// A watchdog in a busy loop: 60 renewals within one TTL.
func TestARenewalStormIsALivenessFailure(t *testing.T) {
	b := newHistory().acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990))
	for i := range int64(60) {
		b.renewVia("", history.OK, 5, "k", "a", ms(100+10*i), ms(101+10*i), ms(1000))
	}
	b.release(history.OK, 1, "k", "a", ms(800), ms(810))
	r, found := badRepliesOf(t, b)
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, found, 1)
	assert.Equal(t, KindRenewalStorm, found[0].Kind)
	assert.Equal(t, 60, found[0].Renewals)
	assert.Contains(t, r.Anomalies[0].Text, "busy loop")
}

// Look-alikes that may all have been true when they ran.
func TestRepliesThatMayHaveBeenTruePass(t *testing.T) {
	cases := map[string]*builder{
		// The acquire came back at 90ms: the key lived until 190ms at most,
		// so an extend at 150ms may have found it.
		"an extend before the key's latest expiry": newHistory().
			acquire(1, "k", "a", ms(0), ms(90), ms(100), ms(90)).
			renewVia(history.ViaExtend, history.OK, 1, "k", "a", ms(150), ms(160), ms(100)),
		// Within the margin for Redis's milliseconds and clock rate.
		"an extend just at the key's latest expiry": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			renewVia(history.ViaExtend, history.OK, 1, "k", "a", ms(113), ms(120), ms(100)),
		// Each ok renewal moves the bound on.
		"a chain of renewals": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			renewVia(history.ViaExtend, history.OK, 1, "k", "a", ms(80), ms(90), ms(100)).
			renewVia(history.ViaExtend, history.OK, 1, "k", "a", ms(170), ms(180), ms(100)).
			release(history.OK, 1, "k", "a", ms(250), ms(260)),
		// A renewal never answered may have landed at any time.
		"after a renewal that was never answered": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			renewVia("", history.Invoke, 5, "k", "a", ms(50), 0, ms(100)).
			renewVia(history.ViaExtend, history.OK, 1, "k", "a", ms(300), ms(310), ms(100)),
		// A clock fault moved when Redis expires keys.
		"during a clock jump": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			faultOn("clock-jump", "node:redis-1", ms(20), ms(400)).
			renewVia(history.ViaExtend, history.OK, 1, "k", "a", ms(300), ms(310), ms(100)),
		// go-zero sets whole seconds plus 500 ms whatever was asked: the
		// lock said its 300 ms request got 1.5 s, and the key may live that
		// long (seen in the audit as a false release-after-expiry).
		"an unlock within the lease time the lock said it set": newHistory().
			call(history.Op{Time: ms(0), Process: 1, F: history.Acquire, Key: "k", Owner: "a", TTL: ms(300)}, history.OK, ms(10),
				func(c *history.Op) { c.TTL, c.Deadline = ms(1500), ms(1500) }).
			release(history.OK, 1, "k", "a", ms(500), ms(510)),
		// A reacquire after the lease ran out may take a free key.
		"a reacquire of a free key": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			renewVia(history.ViaReacquire, history.OK, 1, "k", "a", ms(300), ms(310), ms(100)),
		// No is always true.
		"an extend that said no": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			renewVia(history.ViaExtend, history.Fail, 1, "k", "a", ms(300), ms(310), ms(100)),
		// A failover may have lost b's key: a's extend on the old master may
		// have found its own.
		"another's key under a node fault": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			faultOn("isolate-primary", "node:redis-1", ms(100), ms(600)).
			acquire(2, "k", "b", ms(200), ms(210), ms(1000), ms(1190)).
			renewVia(history.ViaExtend, history.OK, 1, "k", "a", ms(300), ms(310), ms(1000)),
		// A client-side fault cannot.
		"an unlock after expiry of a key another holds is the releases checker's": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			acquire(2, "k", "b", ms(150), ms(160), ms(1000), ms(1150)).
			release(history.OK, 1, "k", "a", ms(300), ms(310)),
		"a watchdog renewing every TTL/3": func() *builder {
			b := newHistory().acquire(1, "k", "a", ms(0), ms(10), ms(300), ms(290))
			for i := range int64(30) {
				b.renewVia("", history.OK, 5, "k", "a", ms(100*i+50), ms(100*i+51), ms(300))
			}
			return b
		}(),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			r, found := badRepliesOf(t, b)
			assert.Equal(t, Valid, r.Verdict, "%v", found)
		})
	}
}

// On a reentrant lock a client's holds share one key: a renewal of one
// hold keeps the other's alive.
func TestAReentrantSiblingKeepsTheKey(t *testing.T) {
	ops := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
		acquire(1, "k", "a2", ms(20), ms(30), ms(100), ms(120)).
		renewVia("", history.OK, 5, "k", "a2", ms(100), ms(110), ms(100)).
		renewVia(history.ViaExtend, history.OK, 1, "k", "a", ms(150), ms(160), ms(100)).build()
	in, err := NewInputOf(ops, true)
	require.NoError(t, err)
	r := replies{}.Check(in)
	assert.Equal(t, Valid, r.Verdict, "%v", r.Details)
	in, err = NewInputOf(ops, false)
	require.NoError(t, err)
	r = replies{}.Check(in)
	assert.Equal(t, Invalid, r.Verdict, "not reentrant, a's key was gone by 110ms")
}

// refusedRelease: a release the lock refused ("not held").
func (b *builder) refusedRelease(p int, key, owner string, inv, ret int64) *builder {
	b.release(history.Fail, p, key, owner, inv, ret)
	b.ops[len(b.ops)-1].Refused = true
	return b
}

// redis-py 6's retried unlock: the first attempt deleted the key, its reply
// was lost, the retry found nothing and said "not held", while the lease
// held the key by every bound. A frozen node (pause-node) keeps its keys.
func TestAnUnlockThatSaysNotHeldOfAKeyItHeldIsFalse(t *testing.T) {
	for name, b := range map[string]*builder{
		"no fault": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			refusedRelease(1, "k", "a", ms(300), ms(310)),
		"a frozen master": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			faultOn("pause-node", "node:redis-1", ms(100), ms(400)).
			refusedRelease(1, "k", "a", ms(300), ms(450)),
		// A fault registered from outside deadbolt, whose declaration says
		// it keeps every key (CLIENT PAUSE WRITE), is judged by what it
		// declares, not by a name the checker never heard of.
		"a fault from outside that keeps every key": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			faultDoing("pause-writes", "node:redis-1", history.Effects{KeepsKeys: true}, ms(100), ms(400)).
			refusedRelease(1, "k", "a", ms(300), ms(450)),
		// Others' acquires timed out under the freeze: none can remove a
		// key that is there (bsm under go-redis's retries).
		"others' acquires unanswered": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			acquireAs(history.Info, 2, "k", "b", ms(100), ms(250), ms(1000)).
			refusedRelease(1, "k", "a", ms(300), ms(310)),
		// A blocking acquire (redis-py's default) waited behind b, whose
		// release ended before the try that took the key began: it cannot
		// have deleted a's key.
		"a blocking acquire granted after another's release": newHistory().
			acquire(2, "k", "b", ms(0), ms(10), ms(1000), ms(990)).
			acquire(1, "k", "a", ms(20), ms(130), ms(1000), 0).triedAt(ms(20), ms(120), ms(125)).
			release(history.OK, 2, "k", "b", ms(100), ms(110)).
			refusedRelease(1, "k", "a", ms(300), ms(310)),
		"after renewals that moved the bound on": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			renewVia("", history.OK, 5, "k", "a", ms(800), ms(810), ms(1000)).
			refusedRelease(1, "k", "a", ms(1500), ms(1510)),
	} {
		t.Run(name, func(t *testing.T) {
			r, found := badRepliesOf(t, b)
			assert.Equal(t, Invalid, r.Verdict)
			require.Len(t, found, 1)
			assert.Equal(t, KindReleaseRefusedHeld, found[0].Kind)
			assert.Contains(t, r.Reason, "1 false no")
			assert.Contains(t, found[0].String(), "said not held")
		})
	}
	_, found := badRepliesOf(t, newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
		renewVia("", history.OK, 5, "k", "a", ms(800), ms(810), ms(1000)).
		refusedRelease(1, "k", "a", ms(1500), ms(1510)))
	assert.Equal(t, ms(1800), found[0].HeldUntil, "a TTL after the last ok renewal was sent")
}

// A "not held" that may have been right passes: the key may have run out,
// another lease may have taken or deleted it, a fault may have removed it.
func TestAnUnlockThatSaysNotHeldAndMayBeRightPasses(t *testing.T) {
	cases := map[string]*builder{
		"after the key's earliest expiry": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			refusedRelease(1, "k", "a", ms(995), ms(1005)),
		"another's release deleted it (a plain DEL)": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			release(history.OK, 2, "k", "b", ms(100), ms(110)).
			refusedRelease(1, "k", "a", ms(300), ms(310)),
		// The same blocking acquire, but b's release was still running
		// when a's try began: it may have deleted a's key.
		"another's release overlapped the try that took the key": newHistory().
			acquire(2, "k", "b", ms(0), ms(10), ms(1000), ms(990)).
			acquire(1, "k", "a", ms(20), ms(130), ms(1000), 0).triedAt(ms(20), ms(105), ms(125)).
			release(history.OK, 2, "k", "b", ms(100), ms(110)).
			refusedRelease(1, "k", "a", ms(300), ms(310)),
		"another was granted the key before the release": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			acquire(2, "k", "b", ms(100), ms(110), ms(1000), ms(1090)).
			refusedRelease(1, "k", "a", ms(300), ms(310)),
		"a restart forgot it": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			faultOn("restart", "node:redis-1", ms(100), ms(200)).
			refusedRelease(1, "k", "a", ms(300), ms(310)),
		// The same fault from outside, declaring nothing: it may have
		// removed the key, as a restart does.
		"a fault from outside that claims nothing": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			faultDoing("pause-writes", "node:redis-1", history.Effects{}, ms(100), ms(200)).
			refusedRelease(1, "k", "a", ms(300), ms(310)),
		"a failover lost it": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			observed(history.Failover, "sentinel-1", "redis-1 -> redis-2", ms(150)).
			refusedRelease(1, "k", "a", ms(300), ms(310)),
		"a release that failed without saying not held": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			release(history.Fail, 1, "k", "a", ms(300), ms(310)),
		"a grant never answered ok": newHistory().
			acquireAs(history.Info, 1, "k", "a", ms(0), ms(10), ms(1000)).
			refusedRelease(1, "k", "a", ms(300), ms(310)),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			r, found := badRepliesOf(t, b)
			assert.NotEqual(t, Invalid, r.Verdict, "%v", found)
			assert.Empty(t, found)
		})
	}
}
