package checker

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

// struckAt records a fault struck inside op (acquire or release) of lease
// on key: its start invoked at start, landed (client stopped or dead) at
// landed, resumed at end (a kill: at once); inside is what the nemesis
// saw of the reply.
func (b *builder) struckAt(id, key, lease string, op history.F, kill bool, start, landed, end int64, inside bool) *builder {
	fault := "pause-in-" + string(op)
	if kill {
		fault, end = "crash-in-"+string(op), landed
	}
	start1 := history.Op{Time: start, Process: history.NemesisProcess, F: history.FaultStart, Fault: fault, FaultID: id, Node: "process 0", Key: key, Lease: lease,
		InOp: &history.InOp{Op: op, Kill: kill, Delay: 1000, Latency: 2000}}
	b.call(start1, history.OK, landed, func(c *history.Op) { c.InOp = &history.InOp{Op: op, Kill: kill, Delay: 1100} })
	heal := history.Op{Time: end, Process: history.NemesisProcess, F: history.FaultEnd, Fault: fault, FaultID: id, Node: "process 0",
		InOp: &history.InOp{Op: op, Kill: kill}}
	return b.call(heal, history.OK, end, func(c *history.Op) { c.InOp = &history.InOp{Op: op, Kill: kill, Inside: inside} })
}

const strikeTTL = 300 // ms

// pausedRelease is pause-in-release on a GET-compare-DEL lock: process 0
// holds p0.1 (acquired at 0, TTL 300 ms) and sends its release at 100 ms;
// it is stopped at 101 ms and resumed at 700 ms, after its lease ran out.
// Process 1 is refused k0 at 150 ms while it sleeps, then takes it at
// 400 ms; the late release replies releaseOutcome at 701 ms.
func pausedRelease(releaseOutcome history.Type) *builder {
	return newHistory().
		acquire(0, "k0", "p0.1", ms(0), ms(1), ms(strikeTTL), 0).
		release(releaseOutcome, 0, "k0", "p0.1", ms(100), ms(701)).
		struckAt("f9", "k0", "p0.1", history.Release, false, ms(100), ms(101), ms(700), true).
		refused(1, "k0", "p1.1", ms(150), ms(151), ms(strikeTTL)).
		acquire(1, "k0", "p1.2", ms(400), ms(401), ms(strikeTTL), 0)
}

func strikesOf(t *testing.T, b *builder) []Strike {
	t.Helper()
	in, err := NewInput(b.build())
	require.NoError(t, err)
	return Strikes(in)
}

func TestAPauseInsideAReleaseHitsAndItsLateDeleteIsLate(t *testing.T) {
	ss := strikesOf(t, pausedRelease(history.OK))
	require.Len(t, ss, 1)
	s := ss[0]
	assert.True(t, s.Inside)
	assert.True(t, s.Held, "process 1 was refused while only the sleeper could hold k0")
	assert.Equal(t, 1, s.HeldBy)
	assert.Equal(t, ms(strikeTTL), s.Expiry)
	assert.True(t, s.Hit())
	assert.True(t, s.Late, "the release took effect after its lease expired")
	assert.False(t, s.Stuck)
	assert.Equal(t, int64(1100), s.Delay, "the delay as sent, from the fault-start's completion")

	r := Check(pausedRelease(history.OK).build(), Options{})
	assert.NotContains(t, kinds(r.Anomalies), KindPrecondition, r.Reason)
	assert.Equal(t, 1, r.Stats.Strikes)
	assert.Equal(t, 1, r.Stats.StrikesHit)
	assert.Equal(t, 1, r.Stats.StrikesLate)

	// A correct lock refuses the late release: the strike hit all the
	// same (the staging held), and nothing took effect late.
	s = strikesOf(t, pausedRelease(history.Fail))[0]
	assert.True(t, s.Hit())
	assert.False(t, s.Late)
	r = Check(pausedRelease(history.Fail).build(), Options{})
	assert.NotContains(t, kinds(r.Anomalies), KindPrecondition, r.Reason)
}

// Look-alikes of a hit: each misses one thing the staging needs, and a
// run whose only strike missed is unknown.
func TestStrikesThatMissedAreNoHit(t *testing.T) {
	cases := map[string]*builder{
		// The reply had been read when the client stopped.
		"reply read before the stop": newHistory().
			acquire(0, "k0", "p0.1", ms(0), ms(1), ms(strikeTTL), 0).
			release(history.OK, 0, "k0", "p0.1", ms(100), ms(701)).
			struckAt("f9", "k0", "p0.1", history.Release, false, ms(100), ms(101), ms(700), false).
			refused(1, "k0", "p1.1", ms(150), ms(151), ms(strikeTTL)),
		// The release took effect before the stop: process 1 took the
		// key, so process 2's refusal shows nothing about the sleeper.
		"released before the stop": newHistory().
			acquire(0, "k0", "p0.1", ms(0), ms(1), ms(strikeTTL), 0).
			release(history.OK, 0, "k0", "p0.1", ms(100), ms(701)).
			acquire(1, "k0", "p1.1", ms(100), ms(102), ms(strikeTTL), 0).
			struckAt("f9", "k0", "p0.1", history.Release, false, ms(100), ms(101), ms(700), true).
			refused(2, "k0", "p2.1", ms(150), ms(151), ms(strikeTTL)),
		// Nobody asked for the key while the client slept.
		"no refusal while stopped": newHistory().
			acquire(0, "k0", "p0.1", ms(0), ms(1), ms(strikeTTL), 0).
			release(history.OK, 0, "k0", "p0.1", ms(100), ms(701)).
			struckAt("f9", "k0", "p0.1", history.Release, false, ms(100), ms(101), ms(700), true).
			refused(1, "k0", "p1.1", ms(90), ms(91), ms(strikeTTL)).
			refused(1, "k0", "p1.2", ms(710), ms(711), ms(strikeTTL)),
		// Resumed before the lease ran out: nothing was in flight across
		// its expiry.
		"resumed before the expiry": newHistory().
			acquire(0, "k0", "p0.1", ms(0), ms(1), ms(strikeTTL), 0).
			release(history.OK, 0, "k0", "p0.1", ms(100), ms(251)).
			struckAt("f9", "k0", "p0.1", history.Release, false, ms(100), ms(101), ms(250), true).
			refused(1, "k0", "p1.1", ms(150), ms(151), ms(strikeTTL)),
		// An acquire of unknown outcome may have taken the key before the
		// refusal.
		"an unknown acquire before the refusal": newHistory().
			acquire(0, "k0", "p0.1", ms(0), ms(1), ms(strikeTTL), 0).
			release(history.OK, 0, "k0", "p0.1", ms(100), ms(701)).
			struckAt("f9", "k0", "p0.1", history.Release, false, ms(100), ms(101), ms(700), true).
			acquireAs(history.Info, 2, "k0", "p2.1", ms(120), ms(130), ms(strikeTTL)).
			refused(1, "k0", "p1.1", ms(150), ms(151), ms(strikeTTL)),
	}
	for name, b := range cases {
		ss := strikesOf(t, b)
		require.Len(t, ss, 1, name)
		assert.False(t, ss[0].Hit(), name)
		assert.False(t, ss[0].Late, name)
		r := Check(b.build(), Options{})
		assert.Equal(t, Unknown, r.Verdict, name)
		assert.Contains(t, kinds(r.Anomalies), KindPrecondition, name)
		assert.Contains(t, r.Reason, `no strike of pause-in-release on key "k0" landed inside its release`, name)
	}
}

// One hit among misses is enough: a series strikes until one lands.
func TestOneHitInASeriesStagesTheRun(t *testing.T) {
	b := newHistory().
		acquire(0, "k0", "p0.1", ms(0), ms(1), ms(strikeTTL), 0).
		release(history.OK, 0, "k0", "p0.1", ms(50), ms(51)).
		struckAt("f8", "k0", "p0.1", history.Release, false, ms(50), ms(52), ms(652), false).
		acquire(0, "k0", "p0.2", ms(1000), ms(1001), ms(strikeTTL), 0).
		release(history.Fail, 0, "k0", "p0.2", ms(1100), ms(1701)).
		struckAt("f9", "k0", "p0.2", history.Release, false, ms(1100), ms(1101), ms(1700), true).
		refused(1, "k0", "p1.1", ms(1150), ms(1151), ms(strikeTTL))
	r := Check(b.build(), Options{})
	assert.NotContains(t, kinds(r.Anomalies), KindPrecondition, r.Reason)
	assert.Equal(t, 2, r.Stats.Strikes)
	assert.Equal(t, 1, r.Stats.StrikesInside)
	assert.Equal(t, 1, r.Stats.StrikesHit)
	assert.Equal(t, 0, r.Stats.StrikesLate)
}

// crashedAcquire is crash-in-acquire on a SETNX-then-PEXPIRE lock:
// process 0 asks for k0 at 100 ms (TTL 300 ms) and is killed at 101 ms;
// its acquire ends unknown. Process 1 is refused at 150 ms, then asks
// again at then: refused when refusedAgain, else granted.
func crashedAcquire(then int64, refusedAgain bool) *builder {
	b := newHistory().
		acquire(2, "k0", "p2.1", ms(0), ms(1), ms(strikeTTL), 0).
		release(history.OK, 2, "k0", "p2.1", ms(60), ms(61)).
		acquireAs(history.Info, 0, "k0", "p0.1", ms(100), ms(102), ms(strikeTTL)).
		struckAt("f9", "k0", "p0.1", history.Acquire, true, ms(100), ms(101), 0, true).
		refused(1, "k0", "p1.1", ms(150), ms(151), ms(strikeTTL))
	if refusedAgain {
		return b.refused(1, "k0", "p1.2", then, then+ms(1), ms(strikeTTL))
	}
	return b.acquire(1, "k0", "p1.2", then, then+ms(1), ms(strikeTTL), 0)
}

func TestACrashInsideAnAcquireThatLeftTheKeyTakenIsStuck(t *testing.T) {
	// Refused two TTLs after the killed acquire was sent: a TTL after its
	// lease ran out, with nobody else granted the key.
	s := strikesOf(t, crashedAcquire(ms(700), true))[0]
	assert.True(t, s.Kill)
	assert.True(t, s.Held, "process 2 had released before the refusal: only the dead client held k0")
	assert.True(t, s.Hit())
	assert.True(t, s.Stuck)
	assert.False(t, s.Late)
	assert.False(t, s.Granted)

	// Look-alikes: refused only within a TTL of the expiry (a lock that
	// set the TTL), or granted after the lease ran out.
	s = strikesOf(t, crashedAcquire(ms(650), true))[0]
	assert.True(t, s.Hit())
	assert.False(t, s.Stuck, "650 ms is within a TTL of the lease's end at 400 ms")
	s = strikesOf(t, crashedAcquire(ms(450), false))[0]
	assert.True(t, s.Hit(), "the kill landed after the key was taken")
	assert.False(t, s.Stuck)
	assert.True(t, s.Granted)

	// Killed before it took the key: the next asker gets it at once.
	b := newHistory().
		acquireAs(history.Info, 0, "k0", "p0.1", ms(100), ms(102), ms(strikeTTL)).
		struckAt("f9", "k0", "p0.1", history.Acquire, true, ms(100), ms(101), 0, true).
		acquire(1, "k0", "p1.1", ms(150), ms(151), ms(strikeTTL), 0).
		refused(2, "k0", "p2.1", ms(160), ms(161), ms(strikeTTL))
	s = strikesOf(t, b)[0]
	assert.False(t, s.Held, "process 2's refusal is process 1's grant")
	assert.False(t, s.Hit())
	r := Check(b.build(), Options{})
	assert.Contains(t, r.Reason, `no strike of crash-in-acquire on key "k0" landed inside its acquire`)
}

// A key already taken with no lease to explain it before the strike (left
// stuck by an earlier one) is no evidence that this strike's acquire took
// it.
func TestAKeyTakenBeforeTheStrikeIsNotCreditedToIt(t *testing.T) {
	b := newHistory().
		acquireAs(history.Info, 2, "k0", "p2.1", ms(0), ms(2), ms(strikeTTL)).
		refused(1, "k0", "p1.1", ms(400), ms(401), ms(strikeTTL)).
		acquireAs(history.Info, 0, "k0", "p0.1", ms(500), ms(502), ms(strikeTTL)).
		struckAt("f9", "k0", "p0.1", history.Acquire, true, ms(500), ms(501), 0, true).
		refused(1, "k0", "p1.2", ms(550), ms(551), ms(strikeTTL)).
		refused(1, "k0", "p1.3", ms(1200), ms(1201), ms(strikeTTL))
	s := strikesOf(t, b)[0]
	assert.True(t, s.TakenBefore, "refused at 400 ms after p2.1 ran out at 302 ms")
	assert.False(t, s.Held)
	assert.False(t, s.Stuck)

	// The same without the refusal at 400 ms: the strike took the key.
	b = newHistory().
		acquireAs(history.Info, 2, "k0", "p2.1", ms(0), ms(2), ms(strikeTTL)).
		acquireAs(history.Info, 0, "k0", "p0.1", ms(500), ms(502), ms(strikeTTL)).
		struckAt("f9", "k0", "p0.1", history.Acquire, true, ms(500), ms(501), 0, true).
		refused(1, "k0", "p1.2", ms(550), ms(551), ms(strikeTTL)).
		refused(1, "k0", "p1.3", ms(1200), ms(1201), ms(strikeTTL))
	s = strikesOf(t, b)[0]
	assert.False(t, s.TakenBefore)
	assert.True(t, s.Held)
	assert.True(t, s.Stuck)
}

// A strike is no grant aimed at: its lease need not be held through the
// strike (a release has let go by then), which the other precondition
// would demand.
func TestAStrikeIsNotJudgedAsAFaultAimedAtAGrant(t *testing.T) {
	r := Check(pausedRelease(history.OK).build(), Options{})
	for _, a := range r.Anomalies {
		assert.NotContains(t, a.Text, "was not held from", a.Text)
	}
}

// oneStepReleases is n stops inside releases that had each taken effect
// whole before the stop: another client took the key at once, so the key
// was never seen held after a stop (a release that is one script).
func oneStepReleases(n int) *builder {
	b := newHistory()
	for i := range n {
		at := int64(i) * 1000
		lease, next := fmt.Sprintf("p0.%d", i+1), fmt.Sprintf("p1.%d", i+1)
		b.acquire(0, "k0", lease, ms(at), ms(at+1), ms(strikeTTL), 0).
			release(history.OK, 0, "k0", lease, ms(at+100), ms(at+701)).
			acquire(1, "k0", next, ms(at+100), ms(at+102), ms(strikeTTL), 0).
			release(history.OK, 1, "k0", next, ms(at+200), ms(at+201)).
			struckAt(fmt.Sprintf("f%d", i), "k0", lease, history.Release, false, ms(at+100), ms(at+101), ms(at+700), true)
	}
	return b
}

// A failure that cannot arise for the lock is said, from the evidence: five
// stops inside its release and the key never seen held after one make its
// release one step (n/a, unknown, never valid); four are too few to tell
// from a staging that merely missed, which stays a missed precondition.
func TestAReleaseThatIsOneStepCannotBeStoppedBetweenItsCheckAndItsDelete(t *testing.T) {
	r := Check(oneStepReleases(MinInsideForOneStep).build(), Options{})
	assert.Equal(t, Unknown, r.Verdict, r.Reason)
	assert.Contains(t, r.NotApplicable, "the lock's release is one step: 5 of 5 strikes of pause-in-release landed inside it")
	assert.NotContains(t, kinds(r.Anomalies), KindPrecondition, "not a miss: it cannot arise")

	r = Check(oneStepReleases(MinInsideForOneStep-1).build(), Options{})
	assert.Equal(t, Unknown, r.Verdict, r.Reason)
	assert.Empty(t, r.NotApplicable)
	assert.Contains(t, kinds(r.Anomalies), KindPrecondition)

	// A series that hit is staged, however many stops missed before it.
	hit := oneStepReleases(MinInsideForOneStep)
	hit.acquire(0, "k0", "p0.9", ms(9000), ms(9001), ms(strikeTTL), 0).
		release(history.Fail, 0, "k0", "p0.9", ms(9100), ms(9701)).
		struckAt("f9", "k0", "p0.9", history.Release, false, ms(9100), ms(9101), ms(9700), true).
		refused(1, "k0", "p1.9", ms(9150), ms(9151), ms(strikeTTL))
	r = Check(hit.build(), Options{})
	assert.Empty(t, r.NotApplicable, r.Reason)
	assert.NotContains(t, kinds(r.Anomalies), KindPrecondition, r.Reason)
}
