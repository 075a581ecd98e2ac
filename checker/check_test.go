package checker

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

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
	assert.Equal(t, Valid, r.Linearizable)
	assert.Empty(t, r.DoubleHolds)
	assert.Empty(t, r.Anomalies)
	assert.Equal(t, "no double holds, and a legal lease-lock order explains all 4 lock operations on 1 key.", r.Reason)
}

func TestCheckDoubleHoldIsInvalid(t *testing.T) {
	ops := newHistory().
		fault("isolate-primary", "redis-1", ms(50), ms(300)).
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(900)).
		acquire(2, "k", "b", ms(100), ms(110), ms(1000), ms(1000)).
		build()

	r := Check(ops, Options{})
	assert.Equal(t, Invalid, r.Verdict)
	assert.Equal(t, Invalid, r.Linearizable, "b was granted while a's lease lasted")
	require.Len(t, r.DoubleHolds, 1)
	require.Len(t, r.Anomalies, 2)
	assert.Equal(t, r.DoubleHolds[0].String(), r.Anomalies[0])
	assert.Contains(t, r.Anomalies[0], "during isolate-primary(redis-1)")
	assert.Contains(t, r.Anomalies[1], `key "k" has no legal lease-lock order`)
	assert.Equal(t, `the lock violated mutual exclusion: 1 double hold (the first on key "k" at 110ms), and no legal lease-lock order for key "k".`, r.Reason)
}

func TestCheckModelOnlyViolationIsInvalid(t *testing.T) {
	ops := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(50)).
		acquire(2, "k", "b", ms(100), ms(110), ms(1000), ms(1000)).
		build()

	r := Check(ops, Options{})
	assert.Equal(t, Invalid, r.Verdict)
	assert.Equal(t, Invalid, r.Linearizable)
	assert.Empty(t, r.DoubleHolds)
	require.Len(t, r.Anomalies, 1)
	assert.Contains(t, r.Reason, `no legal lease-lock order for key "k"`)
}

func TestCheckTooFewAcquiresIsUnknown(t *testing.T) {
	idle := newHistory().
		acquireAs(history.Fail, 1, "k", "a", ms(0), ms(10), ms(100)).
		build()
	r := Check(idle, Options{})
	assert.Equal(t, Unknown, r.Verdict)
	assert.Equal(t, Valid, r.Linearizable)
	assert.Equal(t, "only 0 acquires succeeded where at least 1 are required: an idle run proves nothing, so it never counts as a pass.", r.Reason)

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

func TestCheckTimeoutIsUnknown(t *testing.T) {
	r := Check(bigHistory(3000), Options{LinearizabilityTimeout: time.Nanosecond})
	assert.Equal(t, Unknown, r.Verdict)
	assert.Equal(t, Unknown, r.Linearizable)
	assert.Contains(t, r.Reason, "time limit")
}

func TestOptionsTimeout(t *testing.T) {
	assert.Equal(t, DefaultLinearizabilityTimeout, Options{}.timeout())
	assert.Equal(t, time.Duration(0), Options{LinearizabilityTimeout: -1}.timeout(), "negative means no limit")
	assert.Equal(t, time.Second, Options{LinearizabilityTimeout: time.Second}.timeout())
}

func TestCheckMalformedHistoryIsUnknown(t *testing.T) {
	ops := []history.Op{{Index: 0, Type: history.OK, Process: 1, F: history.Acquire, Key: "k"}}
	r := Check(ops, Options{})
	assert.Equal(t, Unknown, r.Verdict)
	assert.Contains(t, r.Reason, "malformed")
	assert.Error(t, r.WriteVisualization(&bytes.Buffer{}))
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
		build()

	assert.Equal(t, Stats{
		AcquiresOK: 1, AcquiresFail: 1, AcquiresInfo: 2,
		ReleasesOK: 1, ReleasesFail: 1, ReleasesInfo: 1,
		Renewals: 2, RenewalsOK: 1,
		Processes: 5, Keys: 2, Faults: 1,
	}, Check(ops, Options{}).Stats)
}

func TestResultJSONIsSnakeCase(t *testing.T) {
	ops := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(900)).
		acquire(2, "k", "b", ms(100), ms(110), ms(1000), ms(1000)).
		build()
	b, err := json.Marshal(Check(ops, Options{}))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range []string{"verdict", "reason", "double_holds", "anomalies", "linearizable", "stats", "fault_windows"} {
		assert.Contains(t, m, k)
	}
	dh := m["double_holds"].([]any)[0].(map[string]any)
	for _, k := range []string{"key", "first", "second", "overlap_start", "overlap_end"} {
		assert.Contains(t, dh, k)
	}
	assert.Contains(t, dh["first"], "acquired_at")
	assert.Contains(t, m["stats"], "acquires_ok")

	// Empty evidence marshals as [], not null, for report templates.
	b, err = json.Marshal(Check(newHistory().acquire(1, "k", "a", 0, ms(1), ms(100), ms(90)).build(), Options{}))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"double_holds":[]`)
	assert.Contains(t, string(b), `"anomalies":[]`)
	assert.Contains(t, string(b), `"fault_windows":[]`)
}

func TestCheckWritesVisualization(t *testing.T) {
	ops := newHistory().acquire(1, "k", "a", 0, ms(1), ms(100), ms(90)).build()
	var buf bytes.Buffer
	require.NoError(t, Check(ops, Options{}).WriteVisualization(&buf))
	assert.Contains(t, buf.String(), "<html")
}
