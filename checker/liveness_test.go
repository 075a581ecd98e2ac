package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

// refusals adds refused acquires by process 9 from from to to, every step.
func refusals(b *builder, key string, from, to, step int64) *builder {
	for t := from; t < to; t += step {
		b.refused(9, key, "r"+at(t), t, t+ms(1), ms(100))
	}
	return b
}

func TestLivenessFlagsAKeyStuckAfterItsHolderCrashed(t *testing.T) {
	// a took k (no TTL on the server) and died; everyone is refused after.
	b := newHistory().acquire(1, "k", "a", ms(0), ms(10), ms(100), 0)
	r := run(t, "liveness", refusals(b, "k", ms(150), ms(1000), ms(50)).build())
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, r.Anomalies, 1)
	a := r.Anomalies[0]
	assert.Equal(t, KindLiveness, a.Kind)
	assert.Equal(t, ms(110), a.At, "from a TTL after a's grant was last heard of")
	assert.Equal(t, []string{"a"}, a.Leases)
	assert.Contains(t, a.Text, `key "k" stayed taken with no lease to explain it`)
	assert.Contains(t, a.Text, "the last lease that could hold it, a of process 1, ran out at 110ms without a release")
	assert.Equal(t, int64(1), r.Metrics["liveness_failures"])
	assert.Equal(t, int64(841), r.Metrics["unavailable_ms"], "to the end of the history")

	// A crash between the holder's requests: its release never went out.
	b = newHistory().acquire(1, "k", "a", ms(0), ms(10), ms(100), 0).release(history.Fail, 1, "k", "a", ms(50), ms(51))
	r = run(t, "liveness", refusals(b, "k", ms(150), ms(1000), ms(50)).build())
	assert.Equal(t, Invalid, r.Verdict)
	assert.Contains(t, r.Anomalies[0].Text, "ran out at 110ms after its release failed")
}

// An info acquire that took the key and never got its TTL (SETNX, then a
// crash before EXPIRE) explains refusals for one TTL only.
func TestLivenessFlagsAKeyHeldByAnUnfinishedAcquireForever(t *testing.T) {
	b := newHistory().acquireAs(history.Info, 1, "k", "a", ms(0), ms(20), ms(100))
	r := run(t, "liveness", refusals(b, "k", ms(50), ms(800), ms(50)).build())
	assert.Equal(t, Invalid, r.Verdict)
	assert.Equal(t, ms(120), r.Anomalies[0].At, "the info acquire may hold it until 20ms + TTL")
}

// The same refusals answered before the next grant's invocation are
// evidence: nothing could explain them.
func TestLivenessCountsRefusalsWhollyInsideTheStretch(t *testing.T) {
	b := newHistory().
		refused(2, "k", "x", ms(366), ms(380), ms(300)).
		refused(3, "k", "y", ms(394), ms(400), ms(300)).
		refused(4, "k", "z", ms(405), ms(410), ms(300)).
		acquire(5, "k", "a", ms(415), ms(416), ms(300), 0)
	r := run(t, "liveness", b.build())
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, r.Anomalies, 1)
	assert.Contains(t, r.Anomalies[0].Text, "3 acquires refused")
}

// Only a fault that keeps a node from its clients excuses refusals, and
// only while it lasts: a stuck key refused on after the heal, or beside a
// fault that silences nodes only toward each other or acts on clients
// alone, is still stuck.
func TestLivenessCountsRefusalsNoSilencedNodeExplains(t *testing.T) {
	crashed := func() *builder { return newHistory().acquire(1, "k", "a", ms(0), ms(10), ms(100), 0) }
	cases := map[string]*builder{
		"refused on after the heal": refusals(crashed().
			faultDoing("kill", "node:redis-1", history.Effects{Silences: true, Kills: true}, ms(200), ms(500)),
			"k", ms(250), ms(1000), ms(20)),
		"between nodes only": refusals(crashed().
			faultDoing("isolate-primary", "node:redis-1", history.Effects{Silences: true, BetweenNodes: true}, ms(200), ms(900)),
			"k", ms(250), ms(880), ms(20)),
		"on clients only": refusals(crashed().
			faultDoing("link-cut", "link:0:redis-1", history.Effects{Silences: true, OnClients: true}, ms(200), ms(900)),
			"k", ms(250), ms(880), ms(20)),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			r := run(t, "liveness", b.build())
			assert.Equal(t, Invalid, r.Verdict, "%v", r.Reason)
		})
	}
	r := run(t, "liveness", cases["refused on after the heal"].build())
	require.Len(t, r.Anomalies, 1)
	assert.Contains(t, r.Anomalies[0].Text, "acquires refused", "only those after the heal count")
}

func TestLivenessLegalLookAlikes(t *testing.T) {
	cases := map[string]*builder{
		// The TTL frees a crashed holder's key: refusals stop in time.
		"crash with a TTL": refusals(newHistory().acquire(1, "k", "a", ms(0), ms(10), ms(100), 0), "k", ms(20), ms(160), ms(20)).
			acquire(2, "k", "b", ms(170), ms(180), ms(100), 0),
		// The service is down: failures that are not refusals never count.
		"outage": newHistory().acquire(1, "k", "a", ms(0), ms(10), ms(100), 0).
			acquireAs(history.Fail, 2, "k", "b", ms(300), ms(301), ms(100)).
			acquireAs(history.Fail, 2, "k", "c", ms(400), ms(401), ms(100)).
			acquireAs(history.Fail, 2, "k", "d", ms(500), ms(501), ms(100)),
		// A watchdog keeps renewing: the key is explained all along.
		"long watchdog hold": func() *builder {
			b := newHistory().acquire(1, "k", "a", ms(0), ms(10), ms(100), 0)
			for t := int64(30); t < 1000; t += 30 {
				b.renew(1, "k", "a", ms(t), ms(t+2), ms(100), 0)
			}
			return refusals(b, "k", ms(20), ms(1000), ms(40))
		}(),
		// An unknown acquire may hold the key for a TTL after last heard of.
		"info acquire within its TTL": refusals(newHistory().acquire(1, "k", "a", ms(0), ms(10), ms(100), 0).
			acquireAs(history.Info, 2, "k", "b", ms(90), ms(150), ms(100)), "k", ms(160), ms(340), ms(20)).
			acquire(3, "k", "c", ms(350), ms(360), ms(100), 0),
		// A lease granted after its TTL has no window, but it held the key.
		"lease granted after its TTL": refusals(newHistory().acquire(1, "k", "a", ms(0), ms(400), ms(100), 0), "k", ms(10), ms(480), ms(20)).
			acquire(2, "k", "b", ms(500), ms(510), ms(100), 0),
		// An acquire the history never completed may still take effect
		// at its end, and hold the key a TTL after.
		"unfinished acquire": refusals(newHistory().acquireAs(history.Invoke, 1, "k", "a", ms(0), 0, ms(100)),
			"k", ms(150), ms(800), ms(50)),
		// Refusals invoked before the next grant's invocation but answered
		// after it may have met that grant (expiry-simple, seed 6).
		"refusals that reach into the next lease": newHistory().
			refused(2, "k", "x", ms(366), ms(434), ms(300)).
			refused(3, "k", "y", ms(394), ms(423), ms(300)).
			refused(4, "k", "z", ms(414), ms(416), ms(300)).
			acquire(5, "k", "a", ms(415), ms(416), ms(300), 0),
		// Acquires that took the key, found no replica and rolled it back
		// (simple-wait on an isolated master) explain the refusals beside
		// them (failover-simple-wait in make scenario, 2026-11-22).
		"rolled-back acquires": func() *builder {
			b := newHistory()
			for t := int64(0); t < 1000; t += 100 {
				b.acquireAs(history.Fail, 1, "k", "w"+at(ms(t)), ms(t), ms(t+100), ms(300))
				b.refused(2, "k", "x"+at(ms(t)), ms(t+10), ms(t+20), ms(300))
				b.refused(3, "k", "y"+at(ms(t)), ms(t+30), ms(t+40), ms(300))
			}
			return b
		}(),
		// The only node is killed: a lock may answer "taken" for "could
		// not ask" (rueidislock v1.0.40 does) until it is back, empty.
		"refusals while a fault silences the node": refusals(newHistory().acquire(1, "k", "a", ms(0), ms(10), ms(100), 0).
			faultDoing("kill", "node:redis-1", history.Effects{Silences: true, Kills: true}, ms(200), ms(900)),
			"k", ms(250), ms(880), ms(20)).
			acquire(2, "k", "b", ms(950), ms(960), ms(100), 0),
		// A single refusal is no evidence.
		"one refusal": newHistory().acquire(1, "k", "a", ms(0), ms(10), ms(100), 0).
			refused(2, "k", "x", ms(500), ms(501), ms(100)),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			r := run(t, "liveness", b.build())
			assert.Equal(t, Valid, r.Verdict, "%v", r.Anomalies)
		})
	}
}
