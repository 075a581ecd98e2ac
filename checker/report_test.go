package checker

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

func kinds(as []Anomaly) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Kind)
	}
	return out
}

func verdictOf(t *testing.T, r Report, name string) Verdict {
	t.Helper()
	c, ok := r.Check(name)
	require.True(t, ok, "%s ran", name)
	return c.Verdict
}

func TestCheckValid(t *testing.T) {
	ops := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
		release(history.OK, 1, "k", "a", ms(20), ms(30)).
		acquire(2, "k", "b", ms(25), ms(40), ms(100), ms(120)).
		// b's lease expires unreleased; c takes over after it.
		acquire(3, "k", "c", ms(200), ms(210), ms(100), ms(290)).
		build()

	r := Check(ops, Options{})
	assert.Equal(t, Valid, r.Verdict, r.Reason)
	var ran []string
	for _, c := range r.Checks {
		ran = append(ran, c.Checker)
	}
	assert.Equal(t, []string{"double-holds", "fairness", "lease-lock", "liveness", "releases", "replies"}, ran)
	assert.Empty(t, r.Anomalies)
	assert.Contains(t, r.Reason, "no two of 3 holding windows overlapped on a key.")
	assert.Contains(t, r.Reason, "a legal lease-lock order explains all 4 lock operations on 1 key (failed ones")
}

func TestCheckDoubleHoldIsInvalid(t *testing.T) {
	ops := newHistory().
		fault("isolate-primary", "redis-1", ms(50), ms(300)).
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(900)).
		acquire(2, "k", "b", ms(100), ms(110), ms(1000), ms(1000)).
		build()

	r := Check(ops, Options{})
	assert.Equal(t, Invalid, r.Verdict)
	assert.Equal(t, Invalid, verdictOf(t, r, "lease-lock"), "b was granted while a's lease lasted")
	assert.Equal(t, int64(1), r.Metric("double_holds"))
	assert.ElementsMatch(t, []string{KindDoubleHold, KindNoLegalOrder}, kinds(r.Anomalies))
	for _, a := range r.Anomalies {
		if a.Kind == KindDoubleHold {
			assert.Contains(t, a.Text, "during isolate-primary(redis-1)")
			assert.Equal(t, []string{"a", "b"}, a.Leases)
		}
	}
	assert.Contains(t, r.Reason, `the lock violated mutual exclusion: 1 double hold (the first on key "k" at 110ms).`)
	assert.Contains(t, r.Reason, `no legal lease-lock order for key "k".`)
}

// The client gave the lock up (its release failed), so no windows overlap,
// yet the server granted b while a's lease lasted: only the model sees it.
func TestCheckModelOnlyViolationIsInvalid(t *testing.T) {
	ops := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
		release(history.Fail, 1, "k", "a", ms(50), ms(60)).
		acquire(2, "k", "b", ms(100), ms(110), ms(1000), ms(1000)).
		build()

	r := Check(ops, Options{})
	assert.Equal(t, Invalid, r.Verdict)
	assert.Equal(t, Valid, verdictOf(t, r, "double-holds"))
	assert.Equal(t, Invalid, verdictOf(t, r, "lease-lock"))
	assert.Equal(t, []string{KindNoLegalOrder}, kinds(r.Anomalies))
	assert.Contains(t, r.Reason, `no legal lease-lock order for key "k"`)
}

func TestCheckTooFewAcquiresIsUnknown(t *testing.T) {
	noReplicas := func(o *history.Op) { o.Error = "lock not acquired: NOREPLICAS Not enough good replicas to write." }
	idle := newHistory().
		acquireAs(history.Fail, 1, "k", "a", ms(0), ms(10), ms(100)).
		call(history.Op{Time: ms(20), Process: 2, F: history.Acquire, Key: "k", Owner: "b"}, history.Fail, ms(30), noReplicas).
		call(history.Op{Time: ms(40), Process: 2, F: history.Acquire, Key: "k", Owner: "c"}, history.Info, ms(50), noReplicas).
		build()
	r := Check(idle, Options{})
	assert.Equal(t, Unknown, r.Verdict)
	assert.Equal(t, Valid, verdictOf(t, r, "lease-lock"))
	assert.Contains(t, r.Reason, "only 0 acquires of 3 asked succeeded where at least 1 are required (2 failed, 1 with no answer; by error: NOREPLICAS 2, no error given 1)",
		"a run whose clients asked and were refused is not called idle, and says what refused them")
	quiet := Check(newHistory().build(), Options{})
	assert.Contains(t, quiet.Reason, "only 0 acquires succeeded where at least 1 are required: an idle run proves nothing")

	two := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
		release(history.OK, 1, "k", "a", ms(20), ms(30)).
		acquire(1, "k", "b", ms(40), ms(50), ms(100), ms(130)).
		build()
	assert.Equal(t, Unknown, Check(two, Options{MinAcquires: 3}).Verdict)
	assert.Equal(t, Valid, Check(two, Options{MinAcquires: 2}).Verdict)

	// A violation stands even in a run too small to pass.
	bad := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(900)).
		acquire(2, "k", "b", ms(100), ms(110), ms(1000), ms(1000)).
		build()
	assert.Equal(t, Invalid, Check(bad, Options{MinAcquires: 100}).Verdict)
}

func TestCheckBudgetSpentIsUnknown(t *testing.T) {
	r := Check(bigHistory(3000), Options{ModelSteps: 1})
	assert.Equal(t, Unknown, r.Verdict)
	assert.Equal(t, Unknown, verdictOf(t, r, "lease-lock"))
	assert.Contains(t, r.Reason, "spent its budget of 1 step on 3 keys of 3 before deciding them")
}

func TestOptionsModelSteps(t *testing.T) {
	assert.Equal(t, int64(DefaultModelSteps), Options{}.modelSteps())
	assert.Equal(t, int64(0), Options{ModelSteps: -1}.modelSteps(), "negative means no limit")
	assert.Equal(t, int64(5), Options{ModelSteps: 5}.modelSteps())
}

func TestCheckMalformedHistoryIsUnknown(t *testing.T) {
	ops := []history.Op{{Index: 0, Type: history.OK, Process: 1, F: history.Acquire, Key: "k", Lease: "a"}}
	r := Check(ops, Options{})
	assert.Equal(t, Unknown, r.Verdict)
	assert.Contains(t, r.Reason, "malformed")
	assert.Error(t, r.WriteVisualization(&bytes.Buffer{}))
}

func TestCheckUnknownCheckerIsUnknown(t *testing.T) {
	r := Check(newHistory().acquire(1, "k", "a", 0, ms(1), ms(100), 0).build(), Options{Checkers: []string{"nope"}})
	assert.Equal(t, Unknown, r.Verdict)
	assert.Contains(t, r.Reason, `unknown checker "nope"`)
}

// Composition as in Jepsen: invalid beats unknown beats valid, and a check
// that had nothing to judge does not vote.
func TestCompositionRanksVerdictsAndSkipsInapplicableChecks(t *testing.T) {
	fine := newHistory().acquire(1, "k", "a", 0, ms(1), ms(100), 0).build()
	r := Check(fine, Options{Checkers: []string{"double-holds", "fencing"}})
	assert.Equal(t, Valid, r.Verdict, r.Reason)
	c, _ := r.Check("fencing")
	assert.False(t, c.Applicable)
	assert.Contains(t, r.Reason, "no fencing")

	noFinal := newHistory().acquire(1, "k", "a", 0, ms(1), ms(100), 0).
		call(history.Op{Time: ms(2), Process: 1, F: history.Write, Key: "k", Lease: "a", Value: history.Int(1)}, history.OK, ms(3), nil).build()
	r = Check(noFinal, Options{Checkers: []string{"double-holds", "lost-updates"}})
	assert.Equal(t, Unknown, r.Verdict, "lost-updates could not decide")
	assert.Contains(t, r.Reason, "no final read")

	bad := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), 0).
		acquire(2, "k", "b", ms(100), ms(110), ms(1000), 0).
		call(history.Op{Time: ms(120), Process: 1, F: history.Write, Key: "k", Lease: "a", Value: history.Int(1)}, history.OK, ms(130), nil).build()
	r = Check(bad, Options{Checkers: []string{"lost-updates", "double-holds"}})
	assert.Equal(t, Invalid, r.Verdict, "a violation stands beside an undecided check")
}

func TestCheckStats(t *testing.T) {
	ops := newHistory().
		fault("kill-primary", "redis-1", ms(0), ms(5)).
		acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
		renew(1, "k", "a", ms(20), ms(30), ms(100), ms(110)).
		call(history.Op{Time: ms(40), Process: 1, F: history.Renew, Key: "k", Owner: "a"}, history.Info, ms(45), nil).
		release(history.OK, 1, "k", "a", ms(50), ms(60)).
		acquireAs(history.Fail, 2, "k", "b", ms(0), ms(10), ms(100)).
		acquireAs(history.Info, 3, "j", "c", ms(0), ms(10), ms(100)).
		acquireAs(history.Invoke, 4, "j", "d", ms(20), 0, ms(100)).
		release(history.Fail, 2, "k", "b", ms(20), ms(30)).
		release(history.Info, 5, "j", "e", ms(20), ms(30)).
		acquire(6, "late", "f", ms(0), ms(500), ms(100), 0).
		build()

	assert.Equal(t, Stats{
		AcquiresOK: 2, AcquiresFail: 1, AcquiresInfo: 2,
		ReleasesOK: 1, ReleasesFail: 1, ReleasesInfo: 1,
		Renewals: 2, RenewalsOK: 1, ExpiredOnArrival: 1,
		Processes: 6, Keys: 3, Faults: 1,
		AcquireErrors: map[string]int{"no error given": 2}, // the unanswered one has no reply at all
	}, Check(ops, Options{}).Stats)
}

func TestReportJSONIsSnakeCase(t *testing.T) {
	ops := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(900)).
		acquire(2, "k", "b", ms(100), ms(110), ms(1000), ms(1000)).
		build()
	b, err := json.Marshal(Check(ops, Options{}))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range []string{"verdict", "reason", "checks", "anomalies", "stats", "fault_windows"} {
		assert.Contains(t, m, k)
	}
	first := m["checks"].([]any)[0].(map[string]any)
	for _, k := range []string{"checker", "verdict", "reason", "applicable", "anomalies", "metrics", "details"} {
		assert.Contains(t, first, k)
	}
	dh := first["details"].([]any)[0].(map[string]any)
	for _, k := range []string{"key", "first", "second", "overlap_start", "overlap_end"} {
		assert.Contains(t, dh, k)
	}
	assert.Contains(t, dh["first"], "lease")
	assert.Contains(t, m["stats"], "acquires_ok")

	// Empty evidence marshals as [], not null, for report templates.
	b, err = json.Marshal(Check(newHistory().acquire(1, "k", "a", 0, ms(1), ms(100), ms(90)).build(), Options{}))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"anomalies":[]`)
	assert.Contains(t, string(b), `"fault_windows":[]`)
	assert.Contains(t, string(b), `"details":[]`)
}

func TestCheckWritesVisualization(t *testing.T) {
	ops := newHistory().acquire(1, "k", "a", 0, ms(1), ms(100), ms(90)).build()
	var buf bytes.Buffer
	require.NoError(t, Check(ops, Options{}).WriteVisualization(&buf))
	assert.Contains(t, buf.String(), "<html")
}

// Kleppmann's pause, as the counter workload records it: no two windows
// overlap and every grant was legal, so the lock's own checks pass; the
// resource tells the damage, and the report says which check found it.
func TestCheckPauseOnCounterIsInvalidByTheResource(t *testing.T) {
	ops := newHistory().setup("k", 0, 0).
		acquire(1, "k", "p1.1", ms(0), ms(10), ms(100), ms(10_000)).read(1, "k", "p1.1", 0, ms(20), ms(21)).
		acquire(2, "k", "p2.1", ms(150), ms(160), ms(100), 0).
		increment(2, "k", "p2.1", 0, 0, ms(170), ms(180)).release(history.OK, 2, "k", "p2.1", ms(190), ms(191)).
		acquire(3, "k", "p3.1", ms(200), ms(210), ms(100), 0).
		increment(3, "k", "p3.1", 1, 1, ms(220), ms(230)).release(history.OK, 3, "k", "p3.1", ms(240), ms(241)).
		write(history.OK, 1, "k", "p1.1", 1, 2, ms(300), ms(301)).
		final("k", 1, ms(400)).build()
	r := Check(ops, Options{Checkers: append(DefaultCheckers(), "lost-updates")})
	assert.Equal(t, Invalid, r.Verdict)
	for _, name := range DefaultCheckers() {
		assert.Equal(t, Valid, verdictOf(t, r, name), name)
	}
	assert.Equal(t, int64(2), r.Metric("lost_updates"))
	assert.Equal(t, []string{KindLostUpdate}, kinds(r.Anomalies))
	assert.Contains(t, r.Reason, "the resource lost 2 updates of 3 acknowledged increments: the first destroyed by p1.1, a holder that wrote after its lease ran out.")
	assert.Equal(t, 3, r.Stats.WritesOK)
	assert.Equal(t, 3, r.Stats.ReadsOK, "the harness's own setup and final read are not counted")
}

// The same pause against a fenced register: the stale write is rejected,
// nothing is lost, and both resource checks pass.
func TestCheckPauseOnFencedIsValid(t *testing.T) {
	ops := newHistory().setup("k", 0, 0).
		acquireFenced(1, "k", "p1.1", 1, ms(0), ms(10), ms(100), 0).fencedRead(1, "k", "p1.1", 1, 0, ms(20), ms(21)).
		acquireFenced(2, "k", "p2.1", 2, ms(150), ms(160), ms(100), 0).
		fencedRead(2, "k", "p2.1", 2, 0, ms(170), ms(171)).fencedWrite(history.OK, 2, "k", "p2.1", 2, 1, 0, ms(172), ms(180)).
		release(history.OK, 2, "k", "p2.1", ms(190), ms(191)).
		fencedWrite(history.Fail, 1, "k", "p1.1", 1, 1, 0, ms(300), ms(301)).
		final("k", 1, ms(400)).build()
	r := Check(ops, Options{Checkers: append(DefaultCheckers(), "lost-updates", "fencing")})
	assert.Equal(t, Valid, r.Verdict, r.Reason)
	assert.Equal(t, int64(1), r.Metric("stale_writes_rejected"))
	assert.Equal(t, int64(0), r.Metric("lost_updates"))
	assert.Equal(t, 1, r.Stats.WritesFail)
}

// A fault that did not surely start or heal leaves the run unknown: a valid
// verdict would claim the fault was survived, and an invalid one would
// claim a reproduction of a run that did not stage what it set out to (its
// evidence is still listed). A fault that healed ok is no trouble.
func TestFaultThatFailedToStartOrHealIsNeverValid(t *testing.T) {
	n := history.NemesisProcess
	legal := func() *builder {
		return newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			release(history.OK, 1, "k", "a", ms(20), ms(30)).
			acquire(2, "k", "b", ms(40), ms(50), ms(100), ms(140))
	}
	start := history.Op{Time: ms(60), Process: n, F: history.FaultStart, Fault: "pause-node", FaultID: "f9", Node: "redis-2"}
	heal := start
	heal.F, heal.Time = history.FaultEnd, ms(70)
	failed := func(o *history.Op) { o.Error = "no such container" }
	before := history.Op{Time: ms(55), Process: n, F: history.HealthBefore, Fault: "plan"}
	after := history.Op{Time: ms(75), Process: n, F: history.HealthAfter, Fault: "pause-node", FaultID: "f9", Node: "redis-2"}
	unhealthy := func(o *history.Op) { o.Error = "cluster r1 not healthy after 1m0s: PING redis-2: i/o timeout" }
	cases := map[string]*builder{
		"start failed":    legal().call(start, history.Fail, ms(61), failed),
		"start unknown":   legal().call(start, history.Info, ms(61), nil),
		"heal failed":     legal().call(start, history.OK, ms(61), nil).call(heal, history.Fail, ms(71), failed),
		"heal unknown":    legal().call(start, history.OK, ms(61), nil).call(heal, history.Info, ms(71), nil),
		"never healed":    legal().call(start, history.OK, ms(61), nil),
		"heal unanswered": legal().call(start, history.OK, ms(61), nil).call(heal, history.Invoke, 0, nil),
		"unhealthy before": legal().call(before, history.Fail, ms(59), unhealthy).call(start, history.OK, ms(61), nil).
			call(heal, history.OK, ms(71), nil),
		"unhealthy after": legal().call(start, history.OK, ms(61), nil).call(heal, history.OK, ms(71), nil).
			call(after, history.Fail, ms(80), unhealthy),
		"check interrupted": legal().call(start, history.OK, ms(61), nil).call(heal, history.OK, ms(71), nil).
			call(after, history.Info, ms(80), nil),
	}
	for name, b := range cases {
		r := Check(b.build(), Options{})
		assert.Equal(t, Unknown, r.Verdict, name)
		assert.Contains(t, kinds(r.Anomalies), KindFaultFailed, name)
		target := "pause-node(redis-2)"
		if name == "unhealthy before" {
			target = "the health check before the faults of plan ended fail" // made before the workload started
		}
		assert.Contains(t, r.Reason, target, name)
		assert.Contains(t, r.Reason, "did not stage what it set out to", name)
	}
	assert.Contains(t, Check(cases["heal failed"].build(), Options{}).Reason, "no such container")
	assert.Contains(t, Check(cases["unhealthy after"].build(), Options{}).Reason,
		"the health check after pause-node(redis-2) was healed ended fail: cluster r1 not healthy")

	ok := Check(legal().call(before, history.OK, ms(56), nil).call(start, history.OK, ms(61), nil).
		call(heal, history.OK, ms(71), nil).call(after, history.OK, ms(80), nil).build(), Options{})
	assert.Equal(t, Valid, ok.Verdict, ok.Reason)
	assert.Empty(t, ok.Anomalies)

	unsafe := newHistory().
		call(start, history.OK, ms(61), nil).call(heal, history.Fail, ms(71), failed).
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(900)).
		acquire(2, "k", "b", ms(100), ms(110), ms(1000), ms(1000)).
		build()
	r := Check(unsafe, Options{})
	assert.Equal(t, Invalid, r.Verdict, "a double hold is a violation whether or not the fault went as planned")
	assert.NotEmpty(t, r.Staging, "and the run says it did not stage what it set out to")
	assert.Contains(t, kinds(r.Anomalies), KindFaultFailed)
	assert.Contains(t, kinds(r.Anomalies), KindDoubleHold, "the evidence is shown")
	assert.Contains(t, r.Reason, "broken all the same, though the planned strike did not land")
}

// Void makes a verdict unknown and says why first, but for a violation
// the checks proved, which stands with the staging said beside it;
// Unjudgeable makes any verdict unknown.
func TestVoidKeepsAProvenViolation(t *testing.T) {
	for _, v := range []Verdict{Valid, Invalid, Unknown} {
		r := Report{Verdict: v, Reason: "the checks' reason."}
		r.Void("the nemesis never injected its fault.")
		assert.Equal(t, "the nemesis never injected its fault", r.Staging)
		if v == Invalid {
			assert.Equal(t, Invalid, r.Verdict)
			assert.Equal(t, "the nemesis never injected its fault; broken all the same, though the planned strike did not land: the checks' reason.", r.Reason)
			continue
		}
		assert.Equal(t, Unknown, r.Verdict, v)
		assert.Equal(t, "the nemesis never injected its fault: its verdict is unknown. The checks alone found it "+string(v)+": the checks' reason.", r.Reason)
		u := Report{Verdict: v, Reason: "the checks' reason."}
		u.Unjudgeable("the ACL refused the lock")
		assert.Equal(t, Unknown, u.Verdict)
		assert.Empty(t, u.Staging)
	}
	u := Report{Verdict: Invalid, Reason: "x."}
	u.Unjudgeable("the ACL refused the lock")
	assert.Equal(t, Unknown, u.Verdict, "a violation the checks cannot be trusted on is no proof")
}

func TestPluralOfNounsThatHiss(t *testing.T) {
	require.Equal(t, "2 false yeses", Plural(2, "false yes"))
	require.Equal(t, "2 key stretches", Plural(2, "key stretch"))
	require.Equal(t, "1 false yes", Plural(1, "false yes"))
	require.Equal(t, "3 double holds", Plural(3, "double hold"))
}

// One helper counts for every package: one of a thing is singular, none
// and many are plural, the noun's regular plural.
func TestPlural(t *testing.T) {
	for want, got := range map[string]string{
		"1 seed":             Plural(1, "seed"),
		"0 seeds":            Plural(0, "seed"),
		"2 seeds":            Plural(uint64(2), "seed"),
		"1 double hold":      Plural(int64(1), "double hold"),
		"2 key stretches":    Plural(2, "key stretch"),
		"1 key stretch":      Plural(1, "key stretch"),
		"5 keys":             Plural(5, "key"),
		"3 anomalies":        Plural(3, "anomaly"),
		"2 boxes":            Plural(2, "box"),
		"2 pushes":           Plural(2, "push"),
		"1 unit oversold":    PluralAs(1, "unit oversold", "units oversold"),
		"2 units oversold":   PluralAs(int64(2), "unit oversold", "units oversold"),
		"7 client processes": Plural(7, "client process"),
		"1 client process":   Plural(1, "client process"),
	} {
		require.Equal(t, want, got)
	}
}

func TestErrorClassIsTheRedisCodeWhereverTheLibraryPutIt(t *testing.T) {
	for msg, class := range map[string]string{
		"NOREPLICAS Not enough good replicas to write.":                             "NOREPLICAS",
		"lock not acquired: CLUSTERDOWN The cluster is down":                        "CLUSTERDOWN",
		"redis.exceptions.ReadOnlyError: READONLY You can't write":                  "READONLY",
		"read tcp 127.0.0.1:1->127.0.0.1:2: i/o timeout":                            "i/o timeout",
		"lock not acquired: read tcp 127.0.0.1:59020->127.0.0.1:45503: i/o timeout": "i/o timeout",
		"set tcp 127.0.0.1:35288: use of closed network connection":                 "use of closed network connection",
		"lock not acquired: 0 of 1 replicas acknowledged":                           "lock not acquired: 0 of 1 replicas acknowledged",
		"ERR no such key": "ERR no such key",
		"":                "no error given",
	} {
		assert.Equal(t, class, errorClass(msg), msg)
	}
	assert.Len(t, errorClass(strings.Repeat("x", 200)), 51, "a long message is cut short")
}
