package checker

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/deadbolt-lab/deadbolt/history"
)

// withheldRun stages restart-redlock as the nemesis does: client 0 cut off
// from two of five masters from 100 ms to the heal at 12 s, and a step that
// waited for client 0's grant of k0, missed at the heal. Client 0's acquire
// (process 1), asked at ask, is answered only at answered; after the heal
// both clients take k0 in turn, so that the checks alone find the run
// valid.
type withheldRun struct {
	effects        history.Effects
	ttl            int64
	ask, answered  int64
	missedKey      string
	granted        bool  // the acquire that was asking is a grant
	otherHold      int64 // when > 0, another lease holds k0 from then
	pauseClientAt  int64 // when > 0, a pause of a client strikes then
	secondAsk      int64 // when > 0, a second acquire asks from then
	secondAnswered int64
}

func cutOff() withheldRun {
	return withheldRun{effects: history.Effects{OnClients: true}, ttl: ms(8000), ask: ms(200), answered: ms(14000), missedKey: "k0"}
}

func (g withheldRun) build() *builder {
	start := history.Op{Time: ms(100), Process: history.NemesisProcess, F: history.FaultStart, Fault: "link-cut", FaultID: "f1",
		Node: "client 0 -> redis-4,redis-5", Target: "link:0:redis-4,redis-5", Effects: &g.effects}
	heal := history.Op{Time: ms(12000), Process: history.NemesisProcess, F: history.FaultEnd, Fault: "link-cut", FaultID: "f1", Node: "client 0 -> redis-4,redis-5"}
	missed := history.Op{Time: ms(12001), Process: history.NemesisProcess, F: history.FaultMissed, Fault: "restart", Key: g.missedKey,
		Node: "step 2: restart on node:redis-3 at client 0's grant of k0"}
	b := newHistory().call(start, history.OK, ms(101), nil)
	if g.pauseClientAt > 0 {
		fx := history.Effects{OnClients: true, Stops: true}
		b.call(history.Op{Time: g.pauseClientAt, Process: history.NemesisProcess, F: history.FaultStart, Fault: "pause-client", FaultID: "f2",
			Node: "client 1", Target: "client:1", Effects: &fx}, history.OK, g.pauseClientAt+ms(1), nil)
		b.call(history.Op{Time: g.pauseClientAt + ms(2000), Process: history.NemesisProcess, F: history.FaultEnd, Fault: "pause-client", FaultID: "f2", Node: "client 1"},
			history.OK, g.pauseClientAt+ms(2001), nil)
	}
	if g.otherHold > 0 {
		b.acquire(0, "k0", "other", g.otherHold, g.otherHold+ms(5), g.ttl, 0).release(history.OK, 0, "k0", "other", g.otherHold+ms(500), g.otherHold+ms(501))
	}
	if g.ask > 0 {
		if g.granted {
			b.acquire(1, "k0", "p1.1", g.ask, g.answered, g.ttl, 0)
		} else {
			b.acquireAs(history.Fail, 1, "k0", "p1.1", g.ask, g.answered, g.ttl)
		}
	}
	if g.secondAsk > 0 {
		b.acquireAs(history.Fail, 1, "k0", "p1.2", g.secondAsk, g.secondAnswered, g.ttl)
	}
	b.call(missed, history.Fail, ms(12001), func(o *history.Op) {
		o.Error = "client 0's grant of k0 never came before the fault phase ended"
	}).call(heal, history.OK, ms(12000), nil)
	if g.granted {
		b.release(history.OK, 1, "k0", "p1.1", g.answered+ms(100), g.answered+ms(101))
	}
	for i := range int64(12) {
		t := ms(16000 + 100*i)
		owner := fmt.Sprintf("q%d.%d", i%2, 2+i)
		b.acquire(int(i%2), "k0", owner, t, t+ms(2), g.ttl, 0).release(history.OK, int(i%2), "k0", owner, t+ms(50), t+ms(51))
	}
	return b
}

// A lock that grants nothing while the run's faults last (a library that
// waits on the silenced masters past its lease): the step that waited for
// the grant could not be staged for it, and the run is n/a with that
// reason, not a missed staging.
func TestAGrantTheLockWithholdsWhileTheFaultsLastIsNotApplicable(t *testing.T) {
	r := Check(cutOff().build().build(), Options{MinAcquires: 10})
	assert.Equal(t, Unknown, r.Verdict, r.Reason)
	assert.Contains(t, r.NotApplicable, "the lock granted nothing while link-cut(client 0 -> redis-4,redis-5) was in effect: 1 acquire of \"k0\" asked for it over 11.801s of the 11.9s from 101ms to 12.001s, with nobody holding the key, and brought no grant (the last still without an answer when the faults healed)")
	assert.NotContains(t, kinds(r.Anomalies), KindFaultFailed, "not a miss: the lock does not grant under these faults")

	// Two acquires that refused in turn, together asking the whole wait.
	two := cutOff()
	two.answered, two.secondAsk, two.secondAnswered = ms(6000), ms(6050), ms(11990)
	r = Check(two.build().build(), Options{MinAcquires: 10})
	assert.Contains(t, r.NotApplicable, "2 acquires of \"k0\"")
}

// Look-alikes in which the grant could have come, or the evidence is not
// whole: each stays a missed step, unknown, with no reason to call it n/a.
func TestAMissedGrantIsAMissWhenTheEvidenceIsNotWhole(t *testing.T) {
	neverAsked := cutOff()
	neverAsked.ask = 0
	halfAsked := cutOff()
	halfAsked.ask = ms(6000)
	held := cutOff()
	held.otherHold = ms(3000)
	shortWait := cutOff()
	shortWait.ttl = ms(20000)
	paused := cutOff()
	paused.pauseClientAt = ms(4000)
	unnamed := cutOff()
	unnamed.missedKey = "" // recorded before a step that never struck named its key
	for name, g := range map[string]withheldRun{"never asked": neverAsked, "asked half the wait": halfAsked, "another lease held the key": held,
		"a wait shorter than the lease": shortWait, "a client stopped meanwhile": paused, "no key named": unnamed} {
		r := Check(g.build().build(), Options{MinAcquires: 10})
		assert.Equal(t, Unknown, r.Verdict, name)
		assert.Empty(t, r.NotApplicable, name)
		assert.Contains(t, kinds(r.Anomalies), KindFaultFailed, name)
	}
}
