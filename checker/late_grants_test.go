package checker

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/deadbolt-lab/deadbolt/history"
)

// lateGrantRun stages reply-delay as the nemesis does: a link-delay of by
// on client 0's link struck at 100 ms and healed at 10 s, and a step that
// waited for client 0's grant of k0 under it, missed at the heal. Client
// 0's acquire, asked at ask (with lease time ttl), is granted only at
// 10.07 s, after the heal, as rueidislock's is; then both clients take
// k0 in turn, so that the checks alone find the run valid. A zero ask
// leaves the acquire out.
type lateGrantRun struct {
	effects history.Effects
	by, ttl int64
	ask     int64
	// missedKey and missedID are what the missed step names: its key and
	// the window it waited under ("" for a history from before they were
	// recorded).
	missedKey, missedID string
	// refusedAt, when > 0, answers the acquire then with a refusal, and
	// nothing asks again under the fault: a lock that answered, as one
	// that could have granted does (a lock that asks on without a grant
	// for the fault's length withholds it: withheld_grants_test.go).
	refusedAt int64
}

func delayedReplies() lateGrantRun {
	return lateGrantRun{effects: history.Effects{OnClients: true, DelaysReplies: true}, by: ms(400), ttl: ms(300), ask: ms(150),
		missedKey: "k0", missedID: "f1"}
}

func (g lateGrantRun) build() *builder {
	start := history.Op{Time: ms(100), Process: history.NemesisProcess, F: history.FaultStart, Fault: "link-delay", FaultID: "f1",
		Node: "redis-1 by 400ms", Target: "link:0:redis-1", Effects: &g.effects, By: g.by}
	heal := history.Op{Time: ms(10000), Process: history.NemesisProcess, F: history.FaultEnd, Fault: "link-delay", FaultID: "f1", Node: "redis-1 by 400ms"}
	missed := history.Op{Time: ms(9999), Process: history.NemesisProcess, F: history.FaultMissed, Fault: "link-delay", FaultID: g.missedID, Key: g.missedKey,
		Node: "step 1: link-delay on link:0:redis-1, then client 0's grant of k0 under it"}
	b := newHistory().call(start, history.OK, ms(101), nil)
	switch {
	case g.ask > 0 && g.refusedAt > 0:
		b.acquireAs(history.Fail, 0, "k0", "p0.1", g.ask, g.refusedAt, g.ttl)
		b.ops[len(b.ops)-1].Refused = true
	case g.ask > 0:
		b.acquire(0, "k0", "p0.1", g.ask, ms(10070), g.ttl, 0).
			release(history.OK, 0, "k0", "p0.1", ms(10100), ms(10101))
	}
	b.call(missed, history.Fail, ms(9999), func(o *history.Op) {
		o.Error = "client 0's grant of k0 never came while the fault was in effect"
	}).call(heal, history.OK, ms(10000), nil)
	for i := range int64(12) {
		t := ms(10200 + 100*i)
		owner := fmt.Sprintf("p%d.%d", i%2, 2+i)
		b.acquire(int(i%2), "k0", owner, t, t+ms(2), g.ttl, 0).release(history.OK, int(i%2), "k0", owner, t+ms(50), t+ms(51))
	}
	return b
}

// A grant aimed under replies held back past the lease, which the lock
// never handed back while nobody held the key, cannot arise for the lock:
// the run is n/a with that reason, not a missed staging.
func TestAGrantTheLockDropsBecauseItsReplyCameAfterTheLeaseIsNotApplicable(t *testing.T) {
	r := Check(delayedReplies().build().build(), Options{MinAcquires: 10})
	assert.Equal(t, Unknown, r.Verdict, r.Reason)
	assert.Contains(t, r.NotApplicable, "the lock hands back no grant whose reply came after its lease ran out: link-delay(redis-1 by 400ms) held back every reply to the client 400ms, past the lease of 300ms")
	assert.Contains(t, r.NotApplicable, `its 1 acquire of "k0" from 150ms to the heal at 10s, with nobody holding the key`)
	assert.Contains(t, r.Reason, "The checks alone found it valid")
	assert.NotContains(t, kinds(r.Anomalies), KindFaultFailed, "not a miss: it cannot arise")
	assert.NotContains(t, r.Staging, "never struck")
}

// Look-alikes in which the grant could have come: each stays a missed
// step, unknown, with no reason to call it n/a.
func TestAMissedGrantUnderDelayedRepliesIsAMissWhenTheLockCouldHaveGranted(t *testing.T) {
	shorter := delayedReplies()
	shorter.by = ms(200) // the reply arrives inside the lease
	shorter.refusedAt = ms(600)
	neverAsked := delayedReplies()
	neverAsked.ask = 0
	notDelayed := delayedReplies()
	notDelayed.effects = history.Effects{OnClients: true} // a cut, say: no reply came late
	notDelayed.refusedAt = ms(600)
	unnamed := delayedReplies()
	unnamed.missedKey, unnamed.missedID = "", "" // recorded before missed steps named them
	otherWindow := delayedReplies()
	otherWindow.missedID = "f9"
	otherWindow.refusedAt = ms(600)
	cases := map[string]*builder{
		"a delay shorter than the lease":     shorter.build(),
		"the client never asked under it":    neverAsked.build(),
		"a fault that delays no reply":       notDelayed.build(),
		"a missed step naming no key":        unnamed.build(),
		"a missed step under another window": otherWindow.build(),
		"another client held the key all along": delayedReplies().build().
			acquire(1, "k0", "p1.1", ms(20), ms(30), ms(20000), 0).
			release(history.OK, 1, "k0", "p1.1", ms(10050), ms(10060)),
		"a grant came under the fault": delayedReplies().build().
			acquire(2, "k0", "p2.1", ms(5000), ms(5400), ms(300), 0).
			release(history.OK, 2, "k0", "p2.1", ms(5401), ms(5402)),
	}
	for name, b := range cases {
		r := Check(b.build(), Options{MinAcquires: 10})
		assert.Equal(t, Unknown, r.Verdict, "%s: %s", name, r.Reason)
		assert.Empty(t, r.NotApplicable, name)
		assert.Contains(t, kinds(r.Anomalies), KindFaultFailed, "%s: %v", name, r.Anomalies)
		assert.Contains(t, r.Staging, "never struck", name)
	}
}

// A run that broke the lock was applicable, whatever its step missed:
// invalid, with the missed step said beside it.
func TestABrokenRunIsNeverNotApplicable(t *testing.T) {
	b := delayedReplies().build().
		acquire(1, "k1", "p1.90", ms(12000), ms(12001), ms(1000), 0).
		acquire(0, "k1", "p0.90", ms(12100), ms(12101), ms(1000), 0)
	r := Check(b.build(), Options{MinAcquires: 10})
	assert.Equal(t, Invalid, r.Verdict, r.Reason)
	assert.Empty(t, r.NotApplicable)
	assert.Contains(t, r.Reason, "broken all the same, though the planned strike did not land")
	assert.Contains(t, r.Staging, "never struck")
}
