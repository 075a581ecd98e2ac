package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/deadbolt-lab/deadbolt/history"
)

// aimed records a fault-start aimed at lease on key, struck from start
// to done (ok), healed at end.
func (b *builder) aimed(fault, id, node, key, lease string, start, done, end int64) *builder {
	op := history.Op{Time: start, Process: history.NemesisProcess, F: history.FaultStart, Fault: fault, FaultID: id, Node: node, Key: key, Lease: lease}
	b.call(op, history.OK, done, nil)
	heal := history.Op{Time: end, Process: history.NemesisProcess, F: history.FaultEnd, Fault: fault, FaultID: id, Node: node}
	return b.call(heal, history.OK, end, nil)
}

// cut records an opening fault (a link cut) struck from start to done,
// healed at end.
func (b *builder) cut(id string, start, done, end int64) *builder {
	op := history.Op{Time: start, Process: history.NemesisProcess, F: history.FaultStart, Fault: "link-cut", FaultID: id, Node: "client 0 -> redis-4,redis-5"}
	b.call(op, history.OK, done, nil)
	heal := op
	heal.F, heal.Time = history.FaultEnd, end
	return b.call(heal, history.OK, end, nil)
}

// restartRedlock is restart-redlock's staging: the cut links strike at 0-1
// ms, client 0 asks for k0 at ask and holds lease p0.1 (TTL 8 s) until it
// releases at release; redis-3 restarts from strike to struck.
func restartRedlock(ask, release, strike, struck int64) *builder {
	return newHistory().cut("f0", 0, ms(1), ms(20000)).
		acquire(0, "k0", "p0.1", ask, ask+ms(5), ms(8000), 0).
		release(history.OK, 0, "k0", "p0.1", release, release+ms(1)).
		aimed("restart", "f9", "redis-3", "k0", "p0.1", strike, struck, ms(20000))
}

func TestPreconditionsHoldWhenTheAimedLeaseIsHeldUnderEveryFault(t *testing.T) {
	r := Check(restartRedlock(ms(2), ms(5000), ms(8), ms(2008)).build(), Options{})
	assert.Empty(t, kinds(r.Anomalies), r.Reason)
	assert.NotEqual(t, Unknown, r.Verdict, r.Reason)

	// A fault healed before the strike, and one that struck after it, need
	// not have come before the grant.
	early := newHistory().fault("pause-node", "redis-2", ms(0), ms(3)).
		acquire(0, "k0", "p0.1", ms(1), ms(6), ms(8000), 0).
		aimed("restart", "f9", "redis-3", "k0", "p0.1", ms(8), ms(2008), ms(9000)).
		fault("pause-node", "redis-1", ms(2500), ms(2600)).
		release(history.OK, 0, "k0", "p0.1", ms(5000), ms(5001))
	r = Check(early.build(), Options{})
	assert.NotContains(t, kinds(r.Anomalies), KindPrecondition, r.Reason)
}

func TestPreconditionsFlagAStrikeThatMissedItsLease(t *testing.T) {
	cases := map[string]*builder{
		// The holder let go while redis-3 was still restarting.
		"released during the strike": restartRedlock(ms(2), ms(1500), ms(8), ms(2008)),
		// The fault struck after the lease was released.
		"struck after the release": restartRedlock(ms(1), ms(7), ms(8), ms(2008)),
		// The restart took longer than the lease's TTL.
		"outlived the TTL": restartRedlock(ms(2), ms(9500), ms(8), ms(8500)),
		// The grant was asked for before the links were cut: it may hold
		// all five nodes.
		"asked before the cut": newHistory().
			acquire(0, "k0", "p0.1", ms(0), ms(5), ms(8000), 0).
			cut("f1", ms(1), ms(2), ms(20000)).
			aimed("restart", "f9", "redis-3", "k0", "p0.1", ms(8), ms(2008), ms(20000)).
			release(history.OK, 0, "k0", "p0.1", ms(5000), ms(5001)),
	}
	for name, b := range cases {
		r := Check(b.build(), Options{})
		assert.NotEqual(t, Valid, r.Verdict, name)
		assert.NotEmpty(t, r.Staging, "%s: a missed staging is said, beside any violation the checks proved", name)
		assert.Contains(t, kinds(r.Anomalies), KindPrecondition, name)
		assert.Contains(t, r.Reason, "restart(redis-3) was aimed at lease p0.1", name)
	}
	r := Check(cases["asked before the cut"].build(), Options{})
	assert.Contains(t, r.Reason, "before link-cut(client 0 -> redis-4,redis-5) (in effect at the strike) had struck")
}

// Closing the connections can end the holder's lease while the kill is
// still being made: a watchdog renewal in flight fails and the lock tells
// its holder. The fault struck the lease; a lease lost before the strike,
// or released by its holder during it, was not struck.
func TestALeaseLostToTheStrikeWasStruck(t *testing.T) {
	kill := func(end func(*builder) *builder) *builder {
		b := newHistory().acquire(0, "k0", "p0.1", ms(1), ms(5), ms(2000), 0)
		return end(b).aimed("kill-connections", "f9", "redis-1", "k0", "p0.1", ms(100), ms(110), ms(110))
	}
	lostDuring := kill(func(b *builder) *builder { return b.lost(0, "k0", "p0.1", ms(105)) })
	r := Check(lostDuring.build(), Options{})
	assert.NotContains(t, kinds(r.Anomalies), KindPrecondition, r.Reason)

	for name, b := range map[string]*builder{
		"lost before the strike":     kill(func(b *builder) *builder { return b.lost(0, "k0", "p0.1", ms(90)) }),
		"released during the strike": kill(func(b *builder) *builder { return b.release(history.OK, 0, "k0", "p0.1", ms(105), ms(106)) }),
	} {
		r := Check(b.build(), Options{})
		assert.Contains(t, kinds(r.Anomalies), KindPrecondition, name)
		assert.Equal(t, Unknown, r.Verdict, name)
	}
}

// A step that never struck makes the run unknown, even where the checks
// found a double hold: the other steps did not stage the scenario.
// A step that never struck leaves the run unknown when the checks found
// nothing, and a violation they proved stands (invalid, with the staging
// said beside it): a proof is a proof, whether or not the planned strike
// landed, and an unsafe scenario does not pass on it (scenarios'
// MatchesStaged).
func TestAMissedStepLeavesAProvenViolationInvalid(t *testing.T) {
	missed := history.Op{Time: ms(900), Process: history.NemesisProcess, F: history.FaultMissed, Fault: "restart", FaultID: "f7",
		Node: "step 2: restart on node:redis-3 at client 0's grant of k0"}
	why := func(o *history.Op) { o.Error = "client 0's grant of k0 never came before the fault phase ended" }
	b := newHistory().cut("f0", 0, ms(1), ms(1000)).
		acquire(1, "k0", "p1.1", ms(10), ms(20), ms(500), 0).
		acquire(2, "k0", "p2.1", ms(30), ms(40), ms(500), 0).
		call(missed, history.Fail, ms(900), why)
	r := Check(b.build(), Options{})
	assert.Equal(t, Invalid, r.Verdict, r.Reason)
	assert.Contains(t, kinds(r.Anomalies), KindFaultFailed)
	assert.Contains(t, kinds(r.Anomalies), KindDoubleHold, "the double hold is shown")
	assert.Contains(t, r.Reason, "step 2: restart on node:redis-3 at client 0's grant of k0 never struck: client 0's grant of k0 never came")
	assert.Contains(t, r.Reason, "broken all the same, though the planned strike did not land")
	assert.Contains(t, r.Staging, "never struck")

	legal := newHistory().cut("f0", 0, ms(1), ms(1000)).
		acquire(1, "k0", "p1.1", ms(10), ms(20), ms(500), 0).
		release(history.OK, 1, "k0", "p1.1", ms(22), ms(25)).
		acquire(2, "k0", "p2.1", ms(30), ms(40), ms(500), 0).
		call(missed, history.Fail, ms(900), why)
	r = Check(legal.build(), Options{})
	assert.Equal(t, Unknown, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "The checks alone found it valid")
	assert.NotEmpty(t, r.Staging)
}

// No client may ask for a lock before the fault phase's mark: the faults
// that must be in effect from the first acquire strike before it.
func TestAClientThatAskedBeforeTheFaultPhaseIsFlagged(t *testing.T) {
	mark := func(b *builder, at int64) *builder {
		return b.call(history.Op{Time: at, Process: history.NemesisProcess, F: history.PhaseF, Phase: history.PhaseFaults}, history.OK, at, nil)
	}
	early := mark(newHistory().cut("f0", 0, ms(1), ms(20000)), ms(5)).
		acquire(0, "k0", "p0.1", ms(3), ms(8), ms(8000), 0).
		release(history.OK, 0, "k0", "p0.1", ms(100), ms(101))
	r := Check(early.build(), Options{})
	assert.Equal(t, Unknown, r.Verdict)
	assert.Contains(t, kinds(r.Anomalies), KindPrecondition)
	assert.Contains(t, r.Reason, "process 0 sent its acquire of key \"k0\" at 3ms, before the workload was let begin at 5ms")

	onTime := mark(newHistory().cut("f0", 0, ms(1), ms(20000)), ms(2)).
		acquire(0, "k0", "p0.1", ms(3), ms(8), ms(8000), 0).
		release(history.OK, 0, "k0", "p0.1", ms(100), ms(101))
	r = Check(onTime.build(), Options{})
	assert.NotContains(t, kinds(r.Anomalies), KindPrecondition, r.Reason)
}

// handedOff is a pause of client 0 (lease p0.1, TTL 1 s) from 1 s to 3 s,
// healed at heal (100 µs) aimed at lease p1.1, which client 1 holds from
// granted until released.
func handedOff(granted, released, heal int64) *builder {
	pause := history.Op{Time: ms(1000), Process: history.NemesisProcess, F: history.FaultStart, Fault: "pause-client", FaultID: "f1", Node: "process 0"}
	end := history.Op{Time: heal, Process: history.NemesisProcess, F: history.FaultEnd, Fault: "pause-client", FaultID: "f1", Node: "process 0", Key: "k0", Lease: "p1.1"}
	return newHistory().
		acquire(0, "k0", "p0.1", ms(0), ms(1), ms(1000), 0).
		call(pause, history.OK, ms(1000), nil).
		acquire(1, "k0", "p1.1", granted-ms(1), granted, ms(1000), 0).
		call(end, history.OK, heal+100_000, nil).
		release(history.OK, 1, "k0", "p1.1", released, released+ms(1))
}

// A heal aimed at the next holder's grant (a handoff) stages what it
// claims only while that grant is held.
func TestPreconditionsOfAHandoffHeal(t *testing.T) {
	r := Check(handedOff(ms(3001), ms(3300), ms(3002)).build(), Options{})
	assert.NotContains(t, kinds(r.Anomalies), KindPrecondition, r.Reason)

	for name, b := range map[string]*builder{
		"healed after the next holder let go": handedOff(ms(3001), ms(3002), ms(3100)),
		"healed before the next grant":        handedOff(ms(3100), ms(3300), ms(3002)),
	} {
		r := Check(b.build(), Options{})
		assert.Equal(t, Unknown, r.Verdict, name)
		assert.Contains(t, r.Reason, "the heal of pause-client(process 0) was aimed at lease p1.1", name)
	}
}
