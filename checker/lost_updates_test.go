package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

func TestSequentialIncrementsAllLand(t *testing.T) {
	ops := newHistory().setup("k", 0, 0).
		acquire(1, "k", "a", ms(0), ms(10), ms(100), 0).increment(1, "k", "a", 0, 0, ms(20), ms(30)).release(history.OK, 1, "k", "a", ms(40), ms(41)).
		acquire(2, "k", "b", ms(50), ms(60), ms(100), 0).increment(2, "k", "b", 1, 1, ms(70), ms(80)).release(history.OK, 2, "k", "b", ms(90), ms(91)).
		final("k", 2, ms(200)).build()
	r := run(t, "lost-updates", ops)
	assert.Equal(t, Valid, r.Verdict, r.Reason)
	assert.Equal(t, int64(0), r.Metrics["lost_updates"])
	assert.Equal(t, int64(2), r.Metrics["increments_acknowledged"])
}

// Kleppmann's pause: a reads, sleeps past its lease, b increments twice,
// a wakes and writes over them.
func TestLateWriteIsFlaggedAndAttributed(t *testing.T) {
	ops := newHistory().setup("k", 0, 0).
		acquire(1, "k", "a", ms(0), ms(10), ms(100), 0).read(1, "k", "a", 0, ms(20), ms(21)).
		acquire(2, "k", "b", ms(150), ms(160), ms(100), 0).
		increment(2, "k", "b", 0, 0, ms(170), ms(180)).increment(2, "k", "b", 1, 1, ms(190), ms(200)).
		release(history.OK, 2, "k", "b", ms(210), ms(211)).
		write(history.OK, 1, "k", "a", 1, 2, ms(300), ms(301)).
		final("k", 1, ms(400)).build()
	r := run(t, "lost-updates", ops)
	assert.Equal(t, Invalid, r.Verdict)
	assert.Equal(t, int64(2), r.Metrics["lost_updates"])
	require.Len(t, r.Anomalies, 1)
	a := r.Anomalies[0]
	assert.Equal(t, KindLostUpdate, a.Kind)
	assert.Equal(t, []string{"a", "b"}, a.Leases)
	lu := r.Details.([]LostUpdate)[0]
	assert.True(t, lu.Late)
	assert.False(t, lu.DoubleHold)
	assert.Equal(t, ms(200), lu.LateBy, "written at 300ms, its window closed at 100ms")
	assert.Contains(t, a.Text, "read 0 at 21ms and wrote 1 (sent at 300ms) over 2, erasing 2 increments by b: a late write, 200ms after its lease ran out")
	assert.Contains(t, r.Reason, "a holder that wrote after its lease ran out")
}

func TestOverlappingHoldersLoseAnUpdate(t *testing.T) {
	ops := newHistory().setup("k", 0, 0).
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), 0).acquire(2, "k", "b", ms(100), ms(110), ms(1000), 0).
		read(1, "k", "a", 0, ms(120), ms(121)).read(2, "k", "b", 0, ms(130), ms(131)).
		write(history.OK, 1, "k", "a", 1, 0, ms(200), ms(201)).
		write(history.OK, 2, "k", "b", 1, 1, ms(250), ms(251)).
		final("k", 1, ms(2000)).build()
	r := run(t, "lost-updates", ops)
	assert.Equal(t, Invalid, r.Verdict)
	assert.Equal(t, int64(1), r.Metrics["lost_updates"])
	lu := r.Details.([]LostUpdate)[0]
	assert.Equal(t, "b", lu.Lease)
	assert.Equal(t, []string{"a"}, lu.Erasers)
	assert.True(t, lu.DoubleHold)
	assert.False(t, lu.Late)
}

func TestLostUpdatesCannotCountWithoutAFinalRead(t *testing.T) {
	ops := newHistory().setup("k", 0, 0).
		acquire(1, "k", "a", ms(0), ms(10), ms(100), 0).increment(1, "k", "a", 0, 0, ms(20), ms(30)).build()
	r := run(t, "lost-updates", ops)
	assert.Equal(t, Unknown, r.Verdict)
	assert.Contains(t, r.Reason, `no final read of "k"`)
}

// An unknown write may have landed: the register can hold more than the
// acknowledged increments, and that is no loss.
func TestInfoWriteIsNoLoss(t *testing.T) {
	ops := newHistory().setup("k", 0, 0).
		acquire(1, "k", "a", ms(0), ms(10), ms(100), 0).read(1, "k", "a", 0, ms(20), ms(21)).
		write(history.Info, 1, "k", "a", 1, 0, ms(30), ms(40)).
		final("k", 1, ms(200)).build()
	r := run(t, "lost-updates", ops)
	assert.Equal(t, Valid, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "lower bound")
}

func TestRegisterAboveTheIncrementsIsUnknown(t *testing.T) {
	ops := newHistory().setup("k", 0, 0).
		acquire(1, "k", "a", ms(0), ms(10), ms(100), 0).increment(1, "k", "a", 0, 0, ms(20), ms(30)).
		final("k", 5, ms(200)).build()
	r := run(t, "lost-updates", ops)
	assert.Equal(t, Unknown, r.Verdict)
	assert.Contains(t, r.Reason, "ends higher")
}

// A paused client's write is sent while its lease still runs and waits in
// its pipe; it lands after the increments it erases, so after the lease.
func TestWriteSentInTimeButLandedLateIsLate(t *testing.T) {
	ops := newHistory().setup("k", 0, 0).
		acquire(1, "k", "a", ms(0), ms(10), ms(100), 0).read(1, "k", "a", 0, ms(20), ms(21)).
		acquire(2, "k", "b", ms(150), ms(160), ms(100), 0).
		increment(2, "k", "b", 0, 0, ms(170), ms(180)).release(history.OK, 2, "k", "b", ms(190), ms(191)).
		write(history.OK, 1, "k", "a", 1, 1, ms(50), ms(400)).
		final("k", 1, ms(500)).build()
	r := run(t, "lost-updates", ops)
	assert.Equal(t, Invalid, r.Verdict)
	lu := r.Details.([]LostUpdate)[0]
	assert.True(t, lu.Late, "sent at 50ms, inside its window, but landed after b's write at 172ms")
	assert.Equal(t, ms(172), lu.EffectFrom)
	assert.Equal(t, ms(72), lu.LateBy, "its window closed at 0 + TTL")
	assert.Contains(t, r.Anomalies[0].Text, "(sent at 50ms, landed after 172ms)")
}

// A lease granted after its TTL had passed has no window, but the client
// uses it anyway: its write over another holder's increment is late.
func TestWriteUnderALeaseThatArrivedExpiredIsLate(t *testing.T) {
	ops := newHistory().setup("k", 0, 0).
		acquire(1, "k", "late", ms(0), ms(150), ms(100), ms(10_000)).read(1, "k", "late", 0, ms(160), ms(161)).
		acquire(2, "k", "b", ms(155), ms(165), ms(100), 0).increment(2, "k", "b", 0, 0, ms(170), ms(180)).
		write(history.OK, 1, "k", "late", 1, 1, ms(190), ms(191)).
		final("k", 1, ms(300)).build()
	r := run(t, "lost-updates", ops)
	assert.Equal(t, Invalid, r.Verdict)
	lu := r.Details.([]LostUpdate)[0]
	assert.True(t, lu.Late)
	assert.True(t, lu.ExpiredOnArrival)
	assert.False(t, lu.DoubleHold, "the late lease has no window to overlap")
	assert.Contains(t, r.Anomalies[0].Text, "a late write under a lease granted after its TTL had passed")
}

// A lease that increments twice: the erasure names the read it wrote from,
// not the lease's last read.
func TestLostUpdateNamesTheReadBeforeTheWrite(t *testing.T) {
	ops := newHistory().setup("k", 0, 0).
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), 0).acquire(2, "k", "b", ms(0), ms(10), ms(1000), 0).
		read(2, "k", "b", 0, ms(20), ms(21)).
		increment(1, "k", "a", 0, 0, ms(30), ms(40)).
		write(history.OK, 2, "k", "b", 1, 1, ms(50), ms(51)).
		read(2, "k", "b", 1, ms(60), ms(61)).
		final("k", 1, ms(2000)).build()
	r := run(t, "lost-updates", ops)
	require.Len(t, r.Details.([]LostUpdate), 1)
	assert.Equal(t, ms(21), r.Details.([]LostUpdate)[0].ReadAt)
	assert.True(t, r.Details.([]LostUpdate)[0].DoubleHold)
}

func TestLostUpdatesWithoutACounterIsNotApplicable(t *testing.T) {
	r := run(t, "lost-updates", newHistory().acquire(1, "k", "a", 0, ms(1), ms(100), 0).build())
	assert.False(t, r.Applicable)
	assert.Contains(t, r.Reason, "no counter")
}
