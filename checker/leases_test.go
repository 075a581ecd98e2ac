package checker

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

// lease acquires lease for process p with no owner defaulting: the lock's
// token is tok.
func (b *builder) leaseAcquire(p int, key, lease string, inv, ret, ttl int64) *builder {
	return b.call(history.Op{Time: inv, Process: p, F: history.Acquire, Key: key, Lease: lease, Owner: "tok-" + lease, TTL: ttl}, history.OK, ret, nil)
}

func (b *builder) leaseRelease(p int, key, lease string, inv, ret int64) *builder {
	return b.call(history.Op{Time: inv, Process: p, F: history.Release, Key: key, Lease: lease, Owner: "tok-" + lease}, history.OK, ret, nil)
}

func (b *builder) leaseRenew(p int, key, lease string, inv, ret, ttl int64) *builder {
	return b.call(history.Op{Time: inv, Process: p, F: history.Renew, Key: key, Lease: lease, Owner: "tok-" + lease, TTL: ttl}, history.OK, ret, nil)
}

// A lease is one grant of one client. Histories that break that would let
// a real overlap vanish; they are refused, never judged on a guess. Each
// of these was valid before: the second grant of p1.1 was ignored, or
// another process's release ended p1.1's window early.
func TestALeaseThatIsNotOneClientsGrantIsRefused(t *testing.T) {
	cases := map[string]struct {
		b    *builder
		want string
	}{
		"granted twice": {newHistory().
			leaseAcquire(1, "k", "p1.1", ms(0), ms(10), ms(1000)).
			leaseAcquire(2, "k", "p1.1", ms(100), ms(110), ms(1000)),
			"lease p1.1 is acquired again"},
		"acquired under another process's name": {newHistory().
			leaseAcquire(1, "k", "p1.1", ms(0), ms(10), ms(1000)).
			leaseAcquire(2, "k", "p1.2", ms(100), ms(110), ms(1000)),
			"process 2 acquires lease p1.2, a name that belongs to process 1"},
		"released by another client": {newHistory().
			leaseAcquire(1, "k", "p1.1", ms(0), ms(10), ms(1000)).
			leaseRelease(2, "k", "p1.1", ms(50), ms(60)).
			leaseAcquire(2, "k", "p2.1", ms(100), ms(110), ms(1000)),
			"process 2's release names lease p1.1 of process 1, which it does not continue"},
		"a watchdog of two leases": {newHistory().
			leaseAcquire(1, "k", "p1.1", ms(0), ms(10), ms(1000)).
			leaseAcquire(2, "j", "p2.1", ms(0), ms(10), ms(1000)).
			leaseRenew(9, "k", "p1.1", ms(300), ms(310), ms(1000)).
			leaseRenew(9, "j", "p2.1", ms(400), ms(410), ms(1000)),
			"watchdog process 9 renews lease p2.1 after lease p1.1"},
		"a client that renews another's lease": {newHistory().
			leaseAcquire(1, "k", "p1.1", ms(0), ms(10), ms(1000)).
			leaseAcquire(2, "j", "p2.1", ms(0), ms(10), ms(1000)).
			leaseRenew(2, "k", "p1.1", ms(300), ms(310), ms(1000)),
			"process 2, a client, renews lease p1.1 of process 1"},
		"a watchdog that acquires": {newHistory().
			leaseAcquire(1, "k", "p1.1", ms(0), ms(10), ms(1000)).
			leaseRenew(9, "k", "p1.1", ms(300), ms(310), ms(1000)).
			leaseAcquire(9, "j", "p9.1", ms(400), ms(410), ms(1000)),
			"process 9, the watchdog of lease p1.1, acquires"},
	}
	for name, c := range cases {
		ops := c.b.build()
		_, err := NewInput(ops)
		require.ErrorContains(t, err, c.want, name)
		r := Check(ops, Options{})
		assert.Equal(t, Unknown, r.Verdict, name)
		assert.Contains(t, r.Reason, "malformed", name)
		var jsonl strings.Builder
		for _, op := range ops {
			jsonl.WriteString(opLine(t, op))
		}
		_, err = CheckReader(strings.NewReader(jsonl.String()), Options{})
		require.ErrorContains(t, err, c.want, "%s: the streamed check refuses it too (deadbolt check exits 254)", name)
	}
}

// The look-alikes the harness really writes: a client that goes on under a
// new id after an unknown outcome releases its lease there; a watchdog
// renews its one lease many times; names outside the harness's form.
func TestLegalLeaseUseIsAccepted(t *testing.T) {
	successor := newHistory().
		leaseAcquire(1, "k", "p1.1", ms(0), ms(10), ms(1000)).
		call(history.Op{Time: ms(20), Process: 1, F: history.Read, Key: "k", Lease: "p1.1"}, history.Info, ms(520), nil).next(5).
		leaseRelease(5, "k", "p1.1", ms(530), ms(540)).
		leaseAcquire(5, "k", "p5.1", ms(600), ms(610), ms(1000)).
		leaseRelease(5, "k", "p5.1", ms(700), ms(710))
	watchdog := newHistory().
		leaseAcquire(1, "k", "p1.1", ms(0), ms(10), ms(1000)).
		leaseRenew(9, "k", "p1.1", ms(300), ms(310), ms(1000)).
		leaseRenew(9, "k", "p1.1", ms(600), ms(610), ms(1000)).
		leaseRelease(1, "k", "p1.1", ms(700), ms(710))
	legacy := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), 0).
		release(history.OK, 1, "k", "a", ms(100), ms(110))
	for name, b := range map[string]*builder{"successor": successor, "watchdog": watchdog, "legacy names": legacy} {
		_, err := NewInput(b.build())
		require.NoError(t, err, name)
	}
}

func opLine(t *testing.T, op history.Op) string {
	t.Helper()
	b, err := json.Marshal(op)
	require.NoError(t, err)
	return string(b) + "\n"
}

// A renewal a client stamped before the harness even sent its lease's
// acquire says the client's clock is wrong, not that the lock is: the run
// is unknown with a client-clock anomaly, never invalid on its strength
// (the lease-lock model found "no legal order" in it before).
func TestARenewalStampedBeforeItsAcquireIsAClientClockAnomaly(t *testing.T) {
	early := newHistory().
		leaseAcquire(1, "k", "p1.1", ms(100), ms(110), ms(1000)).
		leaseRenew(9, "k", "p1.1", ms(50), ms(60), ms(1000)).reportedAt(ms(400)).
		leaseRelease(1, "k", "p1.1", ms(500), ms(510)).
		leaseAcquire(2, "k", "p2.1", ms(520), ms(530), ms(1000))
	r := Check(early.build(), Options{})
	assert.Equal(t, Unknown, r.Verdict, r.Reason)
	assert.Contains(t, kinds(r.Anomalies), KindClientClock)
	assert.NotContains(t, kinds(r.Anomalies), KindNoLegalOrder, "the stamp is no lock violation")
	assert.Contains(t, r.Reason, "process 9 stamped a renewal of lease p1.1 at 50ms, before the harness sent that lease's acquire at 100ms")

	// Stamped after the acquire was sent, even before its ok arrived (the
	// client granted first), it is placed and judged as usual.
	onTime := newHistory().
		leaseAcquire(1, "k", "p1.1", ms(100), ms(300), ms(1000)).
		leaseRenew(9, "k", "p1.1", ms(200), ms(210), ms(1000)).reportedAt(ms(400)).
		leaseRelease(1, "k", "p1.1", ms(500), ms(510))
	r = Check(onTime.build(), Options{MinAcquires: 1})
	assert.Equal(t, Valid, r.Verdict, r.Reason)
}

// harnessName reads only the harness's own form of a lease, written
// plainly, so that each name has one reading.
func TestHarnessName(t *testing.T) {
	for lease, want := range map[string][2]int{
		"p0.0": {0, 0}, "p1.1": {1, 1}, "p43.1017": {43, 1017},
		"p2147483647.67108863": {2147483647, maxLeaseSeq - 1},
	} {
		n, m, ok := harnessName(lease)
		require.True(t, ok, lease)
		require.Equal(t, want, [2]int{n, m}, lease)
	}
	for _, lease := range []string{"", "p", "p.", "p1.", "p.1", "p1", "q1.1", "P1.1", "p01.1", "p1.01", "p-1.1",
		"p+1.1", "p1.-1", "p1.1x", "p1..1", "p1.1.1", " p1.1", "p2147483648.1", "p1.67108864", "p99999999999999999999.1"} {
		_, _, ok := harnessName(lease)
		require.False(t, ok, lease)
	}
}
