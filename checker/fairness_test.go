package checker

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

// queuedAcquire: an acquire sent at inv that the lock said stood in line
// at queued, ending t at ret.
func (b *builder) queuedAcquire(t history.Type, p int, key, lease string, inv, queued, ret, ttl int64) *builder {
	return b.call(history.Op{Time: inv, Process: p, F: history.Acquire, Key: key, Lease: lease, TTL: ttl}, t, ret,
		func(c *history.Op) {
			c.Queued = queued
			switch t {
			case history.OK:
				c.Owner = lease
			case history.Fail:
				c.Refused = true
			}
		})
}

func jumpsOf(t *testing.T, b *builder) (Result, []QueueJump) {
	t.Helper()
	r := run(t, "fairness", b.build())
	jumps, _ := r.Details.([]QueueJump)
	return r, jumps
}

const fairTTL = 5000

// a holds; w1 queues, then b is sent and granted before w1: a jump.
func TestGrantPastAWaiterInLineIsAQueueJump(t *testing.T) {
	b := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(fairTTL), 0).
		queuedAcquire(history.OK, 2, "k", "w1", ms(20), ms(25), ms(400), ms(fairTTL)).
		release(history.OK, 1, "k", "a", ms(100), ms(110)).
		queuedAcquire(history.OK, 3, "k", "b", ms(105), 0, ms(120), ms(fairTTL)). // barged in
		release(history.OK, 3, "k", "b", ms(300), ms(310)).
		release(history.OK, 2, "k", "w1", ms(500), ms(510))
	r, jumps := jumpsOf(t, b)
	assert.Equal(t, Invalid, r.Verdict, r.Reason)
	require.Len(t, jumps, 1)
	assert.Equal(t, "b", jumps[0].Lease)
	assert.Equal(t, "w1", jumps[0].Waiter)
	assert.Equal(t, 1, jumps[0].Passed)
	require.Len(t, r.Anomalies, 1)
	assert.Equal(t, KindQueueJump, r.Anomalies[0].Kind)
	assert.Equal(t, []string{"b", "w1"}, r.Anomalies[0].Leases)
	assert.Equal(t, int64(1), r.Metrics["queue_jumps"])

	rep := Check(b.build(), Options{})
	assert.Equal(t, Invalid, rep.Verdict)
	dh, _ := rep.Check("double-holds")
	assert.Equal(t, Valid, dh.Verdict, "a queue jump is not a double hold")
}

// The same grants in line order, and look-alikes the lock owes nothing.
func TestGrantsInQueueOrderPass(t *testing.T) {
	cases := map[string]*builder{
		"in order": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(fairTTL), 0).
			queuedAcquire(history.OK, 2, "k", "w1", ms(20), ms(25), ms(115), ms(fairTTL)).
			release(history.OK, 1, "k", "a", ms(100), ms(110)).
			queuedAcquire(history.OK, 3, "k", "b", ms(105), ms(118), ms(400), ms(fairTTL)).
			release(history.OK, 2, "k", "w1", ms(300), ms(310)),
		// w1's wait ran out: it left the line, and b may pass it.
		"waiter timed out": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(fairTTL), 0).
			queuedAcquire(history.Fail, 2, "k", "w1", ms(20), ms(25), ms(400), ms(fairTTL)).
			release(history.OK, 1, "k", "a", ms(100), ms(110)).
			queuedAcquire(history.OK, 3, "k", "b", ms(105), 0, ms(120), ms(fairTTL)).
			queuedAcquire(history.OK, 4, "k", "c", ms(106), ms(119), ms(410), ms(fairTTL)).
			queuedAcquire(history.OK, 5, "k", "d", ms(130), ms(135), ms(520), ms(fairTTL)).
			release(history.OK, 3, "k", "b", ms(300), ms(310)).
			release(history.OK, 4, "k", "c", ms(500), ms(510)),
		// w1 was not yet in line (as far as anyone can tell) when b was sent.
		"sent before the waiter stood in line": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(fairTTL), 0).
			queuedAcquire(history.OK, 2, "k", "w1", ms(20), ms(60), ms(400), ms(fairTTL)).
			queuedAcquire(history.OK, 3, "k", "b", ms(50), ms(65), ms(120), ms(fairTTL)).
			release(history.OK, 1, "k", "a", ms(100), ms(110)).
			queuedAcquire(history.OK, 4, "k", "e", ms(200), ms(210), ms(450), ms(fairTTL)).
			release(history.OK, 3, "k", "b", ms(300), ms(310)).
			release(history.OK, 2, "k", "w1", ms(420), ms(430)),
		// Another key's line is its own.
		"other key": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(fairTTL), 0).
			queuedAcquire(history.OK, 2, "k", "w1", ms(20), ms(25), ms(400), ms(fairTTL)).
			queuedAcquire(history.OK, 4, "j", "w2", ms(21), ms(26), ms(90), ms(fairTTL)).
			release(history.OK, 4, "j", "w2", ms(95), ms(98)).
			release(history.OK, 1, "k", "a", ms(100), ms(110)).
			queuedAcquire(history.OK, 3, "j", "b", ms(105), ms(106), ms(120), ms(fairTTL)).
			queuedAcquire(history.OK, 5, "k", "c", ms(150), ms(155), ms(450), ms(fairTTL)).
			release(history.OK, 2, "k", "w1", ms(420), ms(430)),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			r, jumps := jumpsOf(t, b)
			assert.Empty(t, jumps)
			assert.Equal(t, Valid, r.Verdict, r.Reason)
			assert.Positive(t, r.Metrics["judged_pairs"])
		})
	}
}

// A waiter whose grant came back after its TTL could have been granted
// long before the other: the order is not judged, and with nothing else
// to judge the verdict is unknown, never valid.
func TestWaiterGrantedAfterItsTTLIsNotJudged(t *testing.T) {
	b := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(100), 0).
		queuedAcquire(history.OK, 2, "k", "w1", ms(20), ms(25), ms(400), ms(100)).
		release(history.OK, 1, "k", "a", ms(50), ms(60)).
		queuedAcquire(history.OK, 3, "k", "b", ms(105), 0, ms(120), ms(100))
	r, jumps := jumpsOf(t, b)
	assert.Empty(t, jumps)
	assert.Equal(t, Unknown, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "nothing to judge")
}

// A lock without a queue is not judged at all.
func TestLockWithoutAQueueIsNotJudged(t *testing.T) {
	b := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(fairTTL), 0).
		acquire(2, "k", "b", ms(20), ms(30), ms(fairTTL), 0)
	r := run(t, "fairness", b.build())
	assert.False(t, r.Applicable)
	assert.Equal(t, Valid, r.Verdict)
	// Nearly every run has no queue: the run's summary does not say so,
	// the fairness row of its report does.
	rep := Check(b.build(), Options{})
	assert.NotContains(t, rep.Reason, "no queue")
	f, ok := rep.Check("fairness")
	require.True(t, ok)
	assert.Contains(t, f.Reason, "no queue")
}

// Many waiters passed by one grant: one anomaly, every waiter counted;
// the waiters granted in order between them are not.
func TestOneGrantPassingManyWaiters(t *testing.T) {
	b := newHistory().acquire(1, "k", "a", ms(0), ms(10), ms(fairTTL), 0)
	for i := range 5 {
		b.queuedAcquire(history.OK, 10+i, "k", fmt.Sprintf("w%d", i), ms(20+int64(i)), ms(30+int64(i)), ms(1000+100*int64(i)), ms(fairTTL))
	}
	b.release(history.OK, 1, "k", "a", ms(100), ms(110)).
		queuedAcquire(history.OK, 3, "k", "b", ms(105), 0, ms(120), ms(fairTTL))
	r, jumps := jumpsOf(t, b)
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, jumps, 1)
	assert.Equal(t, 5, jumps[0].Passed)
	assert.Equal(t, "w4", jumps[0].Waiter, "the waiter kept longest")
	assert.Equal(t, int64(5), r.Metrics["waiters_passed"])
	assert.Contains(t, jumps[0].String(), "passed 5 waiters")
}

func TestQueuedTimeOnlyOnAnAcquiresCompletion(t *testing.T) {
	bad := history.Op{Type: history.Invoke, Process: 1, F: history.Acquire, Key: "k", Lease: "p1.1", Queued: 5}
	require.ErrorContains(t, bad.Validate(), "queued")
	bad = history.Op{Type: history.Fail, Process: 1, F: history.Acquire, Key: "k", Lease: "p1.1", Queued: -5}
	require.ErrorContains(t, bad.Validate(), "queued")
	good := history.Op{Type: history.Fail, Process: 1, F: history.Acquire, Key: "k", Lease: "p1.1", Queued: 5}
	require.NoError(t, good.Validate())
}

// The longest stretch between grants on one key is counted, so that a
// lock that stayed safe by not granting shows it.
func TestLongestStretchWithoutAGrant(t *testing.T) {
	ops := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(fairTTL), 0).
		release(history.OK, 1, "k", "a", ms(20), ms(21)).
		acquire(2, "k", "b", ms(30), ms(40), ms(fairTTL), 0).
		acquire(3, "j", "c", ms(0), ms(5), ms(fairTTL), 0).
		release(history.OK, 2, "k", "b", ms(50), ms(51)).
		acquire(4, "k", "d", ms(60), ms(3040), ms(fairTTL), 0).
		build()
	s := Check(ops, Options{}).Stats
	assert.Equal(t, int64(3000), s.LongestNoGrantMS)
	assert.Equal(t, ms(40), s.LongestNoGrantAt)
	assert.Equal(t, "k", s.LongestNoGrantOn)
}
