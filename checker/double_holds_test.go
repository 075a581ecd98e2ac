package checker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

// okIndex is the history index of the ok completion of owner's op f.
func okIndex(t *testing.T, ops []history.Op, f history.F, owner string) int {
	t.Helper()
	for _, op := range ops {
		if op.F == f && op.Owner == owner && op.Type == history.OK {
			return op.Index
		}
	}
	t.Fatalf("no ok %s by %s", f, owner)
	return -1
}

func doubleHolds(t *testing.T, ops []history.Op) []DoubleHold {
	t.Helper()
	dh, err := DoubleHolds(ops)
	require.NoError(t, err)
	return dh
}

func TestDoubleHoldWithinValidity(t *testing.T) {
	ops := newHistory().
		acquireFenced(1, "k", "a", 7, ms(0), ms(10), ms(1000), ms(900)).
		acquireFenced(2, "k", "b", 8, ms(100), ms(110), ms(1000), ms(1000)).
		release(history.OK, 1, "k", "a", ms(500), ms(510)).
		release(history.OK, 2, "k", "b", ms(700), ms(710)).
		build()

	require.Equal(t, []DoubleHold{{
		Key:          "k",
		First:        Hold{Lease: "a", Process: 1, Owner: "a", Fence: 7, AcquiredAt: ms(10), Until: ms(500), AcquireIndex: okIndex(t, ops, history.Acquire, "a"), Client: 1},
		Second:       Hold{Lease: "b", Process: 2, Owner: "b", Fence: 8, AcquiredAt: ms(110), Until: ms(700), AcquireIndex: okIndex(t, ops, history.Acquire, "b"), Client: 2},
		OverlapStart: ms(110),
		OverlapEnd:   ms(500),
	}}, doubleHolds(t, ops))
}

func TestDoubleHoldNamesFaultWindow(t *testing.T) {
	ops := newHistory().
		fault("kill-primary", "redis-0", ms(0), ms(50)). // healed before the overlap
		fault("isolate-primary", "redis-1", ms(80), ms(300)).
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(900)).
		acquire(2, "k", "b", ms(100), ms(110), ms(1000), ms(1000)).
		build()

	dh := doubleHolds(t, ops)
	require.Len(t, dh, 1)
	assert.Equal(t, []string{"isolate-primary(redis-1)"}, dh[0].Faults)
	assert.Equal(t, ms(110), dh[0].OverlapStart)
	assert.Equal(t, ms(1000), dh[0].OverlapEnd, "without releases, a's hold ends at its invocation + TTL, whatever deadline it claimed")
	assert.Contains(t, dh[0].String(), "during isolate-primary(redis-1)")
	assert.Contains(t, dh[0].String(), `double hold on key "k"`)
}

func TestEveryOverlappingPairIsReported(t *testing.T) {
	ops := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(300), ms(300)).
		acquire(2, "k", "b", ms(20), ms(30), ms(180), ms(200)).
		acquire(3, "k", "c", ms(40), ms(50), ms(60), ms(100)).
		build()

	var got [][3]any
	for _, d := range doubleHolds(t, ops) {
		got = append(got, [3]any{d.First.Owner + d.Second.Owner, d.OverlapStart, d.OverlapEnd})
	}
	assert.Equal(t, [][3]any{
		{"ab", ms(30), ms(200)},
		{"ac", ms(50), ms(100)},
		{"bc", ms(50), ms(100)},
	}, got)
}

func TestNoDoubleHold(t *testing.T) {
	cases := map[string]*builder{
		// a's lease ran out with no release; b took the lock afterwards.
		"expired lease then another acquire": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			acquire(2, "k", "b", ms(150), ms(160), ms(100), ms(240)),
		"sequential handoffs": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			release(history.OK, 1, "k", "a", ms(20), ms(30)).
			acquire(2, "k", "b", ms(20), ms(30), ms(1000), ms(1010)).
			release(history.OK, 2, "k", "b", ms(40), ms(50)).
			acquire(1, "k", "c", ms(40), ms(60), ms(1000), ms(1030)),
		"different keys": newHistory().
			acquire(1, "k1", "a", ms(0), ms(10), ms(1000), ms(990)).
			acquire(2, "k2", "b", ms(0), ms(10), ms(1000), ms(990)),
		"info acquire then another client": newHistory().
			acquireAs(history.Info, 1, "k", "a", ms(0), ms(500), ms(1000)).
			acquireAs(history.Invoke, 3, "k", "c", ms(0), 0, ms(1000)).
			acquire(2, "k", "b", ms(100), ms(110), ms(1000), ms(1090)),
		// The hold ends when the client invokes release, whatever the outcome.
		"failed release then another acquire": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			release(history.Fail, 1, "k", "a", ms(100), ms(110)).
			acquire(2, "k", "b", ms(120), ms(130), ms(1000), ms(1110)),
		"info release then another acquire": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			release(history.Info, 1, "k", "a", ms(100), ms(110)).
			acquire(2, "k", "b", ms(120), ms(130), ms(1000), ms(1110)),
		"same owner renewals": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
			renew(1, "k", "a", ms(50), ms(60), ms(100), ms(140)).
			renew(1, "k", "a", ms(100), ms(110), ms(100), ms(190)).
			release(history.OK, 1, "k", "a", ms(150), ms(160)).
			acquire(2, "k", "b", ms(170), ms(180), ms(100), ms(260)),
		"holds touching at one instant": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(50), ms(50)).
			acquire(2, "k", "b", ms(40), ms(50), ms(100), ms(140)),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Empty(t, doubleHolds(t, b.build()))
		})
	}
}

func TestRenewalMovesTheDeadline(t *testing.T) {
	// b acquires after a's first deadline but before the renewed one.
	ops := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
		renew(1, "k", "a", ms(50), ms(60), ms(100), ms(140)).
		acquire(2, "k", "b", ms(100), ms(110), ms(100), ms(190)).
		build()

	dh := doubleHolds(t, ops)
	require.Len(t, dh, 1)
	assert.Equal(t, Hold{Lease: "a", Process: 1, Owner: "a", AcquiredAt: ms(10), Until: ms(150), AcquireIndex: okIndex(t, ops, history.Acquire, "a"), Client: 1}, dh[0].First,
		"renewed at 50ms: held until 150ms, whatever deadline the lock claimed")
	assert.Equal(t, [2]int64{ms(110), ms(150)}, [2]int64{dh[0].OverlapStart, dh[0].OverlapEnd})
}

func TestLateRenewalRevivesLeaseFromItsOk(t *testing.T) {
	// a's renewal is sent after its window closed at 100: a held nothing
	// from 100 until the renewal's ok at 120.
	ops := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).
		renew(1, "k", "a", ms(105), ms(120), ms(100), ms(170)).
		acquire(2, "k", "b", ms(95), ms(100), ms(100), ms(180)).
		build()

	holds, err := Holds(ops)
	require.NoError(t, err)
	acq := okIndex(t, ops, history.Acquire, "a")
	assert.Equal(t, []Hold{
		{Lease: "a", Process: 1, Owner: "a", AcquiredAt: ms(10), Until: ms(100), AcquireIndex: acq, Client: 1},
		{Lease: "b", Process: 2, Owner: "b", AcquiredAt: ms(100), Until: ms(195), AcquireIndex: okIndex(t, ops, history.Acquire, "b"), Client: 2},
		{Lease: "a", Process: 1, Owner: "a", AcquiredAt: ms(120), Until: ms(205), AcquireIndex: acq, Client: 1},
	}, holds["k"])

	dh := doubleHolds(t, ops)
	require.Len(t, dh, 1)
	assert.Equal(t, [2]int64{ms(120), ms(195)}, [2]int64{dh[0].OverlapStart, dh[0].OverlapEnd})
}

// The window runs to invocation + configured TTL: a deadline the lock
// claims, absent, short or far in the future, changes nothing.
func TestWindowIgnoresTheDeadlineTheLockClaims(t *testing.T) {
	for _, claimed := range []int64{0, ms(50), ms(100_000)} {
		ops := newHistory().
			acquire(1, "k", "a", ms(5), ms(10), ms(100), claimed).
			build()
		holds, err := Holds(ops)
		require.NoError(t, err)
		require.Len(t, holds["k"], 1)
		assert.Equal(t, ms(105), holds["k"][0].Until, "claimed %s", time.Duration(claimed))
	}
	// A lying deadline does not hide an overlap either.
	ops := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(20)).
		acquire(2, "k", "b", ms(50), ms(60), ms(100), ms(150)).
		build()
	require.Len(t, doubleHolds(t, ops), 1)
}

// A lock that reports one token for every client is judged by the
// harness's lease ids: the same token on two overlapping leases is still a
// double hold, and no legal order explains it.
func TestSharedTokenIsStillTwoLeases(t *testing.T) {
	ops := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).token("same").
		acquire(2, "k", "b", ms(100), ms(110), ms(1000), ms(1090)).token("same").
		build()
	dh := doubleHolds(t, ops)
	require.Len(t, dh, 1)
	assert.Equal(t, "same", dh[0].First.Owner)
	assert.Equal(t, "same", dh[0].Second.Owner)
	assert.Equal(t, [2]string{"a", "b"}, [2]string{dh[0].First.Lease, dh[0].Second.Lease})
	r, err := LeaseLock(ops, 0)
	require.NoError(t, err)
	assert.Equal(t, Invalid, r.Verdict)
}

// A lease that arrives after its TTL passed has no window: it is no double
// hold (the lock service kept the key for no one), it is counted, and a
// client that used it anyway is for the resource checkers.
func TestLeaseGrantedAfterItsTTLHasNoWindow(t *testing.T) {
	ops := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
		acquire(2, "k", "late", ms(20), ms(1500), ms(100), ms(100_000)).
		build()
	in, err := NewInput(ops)
	require.NoError(t, err)
	assert.Empty(t, findDoubleHolds(in.Holds, nil, false))
	assert.Equal(t, []string{"late"}, in.ExpiredOnArrival)
	assert.Len(t, in.Holds["k"], 1)

	r := run(t, "double-holds", ops)
	assert.Equal(t, Valid, r.Verdict)
	assert.Contains(t, r.Reason, "1 lease arrived after the TTL had passed (no holding window)")
	assert.Equal(t, 1, Check(ops, Options{}).Stats.ExpiredOnArrival)
}

// Renewals are stamped by the client and may be recorded after later
// operations: the windows follow their times, not their indexes.
func TestClientStampedRenewalRecordedLateStillExtends(t *testing.T) {
	ops := []history.Op{
		{Index: 0, Time: ms(0), Type: history.Invoke, Process: 1, F: history.Acquire, Key: "k", Lease: "a", TTL: ms(100)},
		{Index: 1, Time: ms(10), Type: history.OK, Process: 1, F: history.Acquire, Key: "k", Lease: "a", TTL: ms(100)},
		{Index: 2, Time: ms(120), Type: history.Invoke, Process: 2, F: history.Acquire, Key: "k", Lease: "b", TTL: ms(100)},
		{Index: 3, Time: ms(130), Type: history.OK, Process: 2, F: history.Acquire, Key: "k", Lease: "b", TTL: ms(100)},
		// a's watchdog renewed at 60ms; its report came after b's grant.
		{Index: 4, Time: ms(60), Stamp: history.StampClient, Type: history.Invoke, Process: 3, F: history.Renew, Key: "k", Lease: "a", TTL: ms(100)},
		{Index: 5, Time: ms(62), Stamp: history.StampClient, Type: history.OK, Process: 3, F: history.Renew, Key: "k", Lease: "a", TTL: ms(100)},
	}
	dh := doubleHolds(t, ops)
	require.Len(t, dh, 1, "a held until 160ms")
	assert.Equal(t, [2]int64{ms(130), ms(160)}, [2]int64{dh[0].OverlapStart, dh[0].OverlapEnd})
}

func TestDoubleHoldsRejectsMalformedHistory(t *testing.T) {
	ops := []history.Op{{Index: 0, Type: history.OK, Process: 1, F: history.Acquire, Key: "k"}}
	_, err := DoubleHolds(ops)
	assert.Error(t, err)
}

// An overlap of 1ns is a double hold like any other, and says so: it once
// printed as "(0s)".
func TestATinyOverlapPrintsItsLength(t *testing.T) {
	ops := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), 0).
		acquire(2, "k", "b", ms(20), ms(500), ms(1000), 0).
		release(history.OK, 1, "k", "a", ms(500)+1, ms(501)).
		release(history.OK, 2, "k", "b", ms(700), ms(710)).
		build()
	dh := doubleHolds(t, ops)
	require.Len(t, dh, 1)
	assert.Equal(t, int64(1), dh[0].OverlapEnd-dh[0].OverlapStart)
	assert.Contains(t, dh[0].String(), "from 500ms to 500ms (1ns)")
	assert.Equal(t, "1.5µs", at(1500))
	assert.Equal(t, "2.5ms", at(ms(2)+ms(1)/2))
}

// A holder the lock told its lease was gone stops there: a grant after the
// loss was told is no double hold; one before it is.
func TestALossToldEndsTheHoldersWindow(t *testing.T) {
	told := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(2000), ms(1990)).
		lost(5, "k", "a", ms(100)).
		acquire(2, "k", "b", ms(101), ms(102), ms(2000), ms(2090)).
		release(history.Info, 1, "k", "a", ms(105), ms(106))
	assert.Empty(t, doubleHolds(t, told.build()))
	late := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(2000), ms(1990)).
		acquire(2, "k", "b", ms(101), ms(102), ms(2000), ms(2090)).
		lost(5, "k", "a", ms(103)).
		release(history.Info, 1, "k", "a", ms(105), ms(106))
	require.Len(t, doubleHolds(t, late.build()), 1)
}

// The deadline can pass while a watchdog renewal is still in flight: the
// loss is told on a process of its own (the renewal's stays open until its
// unknown outcome), the history is well formed, and the loss ends the
// window all the same.
func TestALossToldWhileARenewalIsInFlightEndsTheWindow(t *testing.T) {
	ops := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(2000), ms(1990)).
		renewVia("", history.Info, 5, "k", "a", ms(1500), ms(2400), ms(2000)).
		lost(6, "k", "a", ms(1990)).
		acquire(2, "k", "b", ms(2100), ms(2102), ms(2000), ms(4090)).
		build()
	r := Check(ops, Options{Checkers: []string{"double-holds", "lease-lock"}})
	require.NotContains(t, r.Reason, "malformed", r.Reason)
	assert.Empty(t, doubleHolds(t, ops))

	// Told on the watchdog's own process, as the harness once did, the
	// same history cannot be read.
	reused := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(2000), ms(1990)).
		renewVia("", history.Info, 5, "k", "a", ms(1500), ms(2400), ms(2000)).
		lost(5, "k", "a", ms(1990)).
		build()
	require.Contains(t, Check(reused, Options{Checkers: []string{"double-holds"}}).Reason, "invoked again while")
}
