package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

func badUsesOf(t *testing.T, b *builder) (Result, []BadUse) {
	t.Helper()
	r := run(t, "uses", b.build())
	return r, r.Details.([]BadUse)
}

// redsync v4.3's Extend: the holder stopped while its extend was out, the
// reply came 2.5 s later, and the extend said ok of a 1 s lease; the
// holder wrote on it.
func TestALateYesThatWasUsedIsFalse(t *testing.T) {
	b := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
		read(1, "k", "a", 3, ms(20), ms(21)).
		renewVia(history.ViaExtend, history.OK, 1, "k", "a", ms(300), ms(2810), ms(1000)).stamped(ms(301), ms(2805)).
		write(history.OK, 1, "k", "a", 4, 3, ms(2820), ms(2830))
	r, found := badUsesOf(t, b)
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, found, 1)
	assert.Equal(t, KindLateYesUsed, found[0].Kind)
	assert.Equal(t, "extend", found[0].Call)
	assert.Equal(t, ms(2504), found[0].Took)
	assert.Contains(t, r.Anomalies[0].Text, "longer than the 1s lease it gave")

	// A grant that arrived after its own lease: the same.
	b = newHistory().
		acquire(1, "k", "a", ms(0), ms(1500), ms(1000), ms(990)).
		read(1, "k", "a", 3, ms(1510), ms(1511))
	_, found = badUsesOf(t, b)
	require.Len(t, found, 1)
	assert.Equal(t, "acquire", found[0].Call)
}

// A watchdog that found the lease gone and never told its holder, who
// went on writing.
func TestAWriteAfterTheLockFoundTheLeaseGoneIsFalse(t *testing.T) {
	b := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
		read(1, "k", "a", 3, ms(20), ms(21)).
		refusedRenewal("", 5, "k", "a", ms(400), ms(410), ms(1000)).
		write(history.OK, 1, "k", "a", 4, 3, ms(600), ms(610))
	r, found := badUsesOf(t, b)
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, found, 1)
	assert.Equal(t, KindWriteAfterRefusal, found[0].Kind)
	assert.Contains(t, r.Anomalies[0].Text, "never told the holder")
}

// redis-py 6's retried SET NX: the first attempt took the key, the retry
// read it taken, and the acquire said "not taken" with its own token left
// on the master.
func TestARefusalThatLeftItsOwnTokenIsFalse(t *testing.T) {
	b := newHistory().
		refused(1, "k", "a", ms(0), ms(1600), ms(1000)).
		inspect("k", "a", "tok-a", ms(1601), "redis-1")
	r, found := badUsesOf(t, b)
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, found, 1)
	assert.Equal(t, KindRefusedButTaken, found[0].Kind)
	assert.Equal(t, "redis-1", found[0].Node)
	assert.Contains(t, r.Anomalies[0].Text, "it took the key and said it did not")
}

// The harness reads a refused acquire's key back to find a refusal that
// took the key; a read that did not answer proves nothing either way, so
// a run with one is unknown, not valid. A read that found nothing is the
// legal look-alike.
func TestARefusalWhoseKeyCouldNotBeReadIsUnknown(t *testing.T) {
	unanswered := newHistory().
		refused(1, "k", "a", ms(0), ms(1600), ms(1000)).
		call(history.Op{Time: ms(1601), Process: history.HarnessProcess, F: history.Inspect, Key: "k", Lease: "a", Owner: "tok-a"}, history.Info, ms(2601),
			func(c *history.Op) { c.Error = "context deadline exceeded" })
	r, found := badUsesOf(t, unanswered)
	assert.Empty(t, found)
	assert.Equal(t, Unknown, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "could not read back the key of 1 refused acquire right after its refusal (the first: lease a on key \"k\" at 1.601s: context deadline exceeded)")

	read := newHistory().
		refused(1, "k", "a", ms(0), ms(1600), ms(1000)).
		inspect("k", "a", "tok-a", ms(1601), "")
	r, found = badUsesOf(t, read)
	assert.Empty(t, found)
	assert.Equal(t, Valid, r.Verdict, r.Reason)
}

func TestUsesTheLockCouldAnswerPass(t *testing.T) {
	cases := map[string]*builder{
		// The library answered in 5 ms; the harness read the reply late.
		"a quick call read late": newHistory().
			acquire(1, "k", "a", ms(0), ms(1500), ms(1000), ms(990)).stamped(ms(1), ms(6)).
			read(1, "k", "a", 3, ms(1510), ms(1511)),
		// A late yes nobody used.
		"a late yes released at once": newHistory().
			acquire(1, "k", "a", ms(0), ms(1500), ms(1000), ms(990)).
			release(history.OK, 1, "k", "a", ms(1510), ms(1511)),
		// A later yes in time makes the lease good again.
		"a late yes, then a timely one": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			renewVia(history.ViaExtend, history.OK, 1, "k", "a", ms(300), ms(2810), ms(1000)).stamped(ms(301), ms(2805)).
			renewVia(history.ViaExtend, history.OK, 1, "k", "a", ms(2900), ms(2910), ms(1000)).stamped(ms(2901), ms(2905)).
			write(history.OK, 1, "k", "a", 4, 3, ms(2920), ms(2930)),
		// The lock told its holder: what the holder does next is its own.
		"a refusal the lock told": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			refusedRenewal("", 5, "k", "a", ms(400), ms(410), ms(1000)).
			lost(5, "k", "a", ms(410)).
			write(history.OK, 1, "k", "a", 4, 3, ms(600), ms(610)),
		// A write sent before the refusal.
		"a write before the refusal": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			write(history.OK, 1, "k", "a", 4, 3, ms(390), ms(420)).
			refusedRenewal("", 5, "k", "a", ms(400), ms(410), ms(1000)),
		// A refusal whose token no node held: the key was another's.
		"a refusal that left nothing": newHistory().
			refused(1, "k", "a", ms(0), ms(10), ms(1000)).
			inspect("k", "a", "tok-a", ms(11), ""),
		// A renewal that failed without saying the lease is gone.
		"a renewal that could not reach Redis": newHistory().
			acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
			renewVia("", history.Fail, 5, "k", "a", ms(400), ms(410), ms(1000)).
			write(history.OK, 1, "k", "a", 4, 3, ms(600), ms(610)),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			r, found := badUsesOf(t, b)
			assert.Equal(t, Valid, r.Verdict, "%v", found)
		})
	}
}

// The fenced lock stopped inside its acquire past its lease (450 ms
// against 300 ms): its late grant is used, but the fencing-aware resource
// rejects the stale read, which then has no effect. That is the fence
// doing its job, valid and said so; the same late grant whose use the
// resource took (no fence checked, or a token it could not tell stale)
// stays a violation.
func TestALateYesWhoseUseTheFenceRejectedIsCaught(t *testing.T) {
	late := func(readOutcome history.Type) *builder {
		b := newHistory().
			acquireFenced(1, "k", "a", 3, ms(0), ms(460), ms(300), ms(290))
		return b.call(history.Op{Time: ms(470), Process: 1, F: history.Read, Key: "k", Lease: "a", Fence: 3}, readOutcome, ms(471), func(c *history.Op) {
			if readOutcome == history.OK {
				c.Value = history.Int(7)
			}
		})
	}
	r, found := badUsesOf(t, late(history.Fail))
	assert.Equal(t, Valid, r.Verdict, r.Reason)
	assert.Empty(t, found)
	assert.Equal(t, int64(1), r.Metrics["late_uses_rejected"])
	assert.Contains(t, r.Reason, "caught by the fence")

	r, found = badUsesOf(t, late(history.OK))
	assert.Equal(t, Invalid, r.Verdict, r.Reason)
	require.Len(t, found, 1)
	assert.Equal(t, KindLateYesUsed, found[0].Kind)

	// A refused renewal the holder was never told of, then a write the
	// fence rejected: caught too.
	b := newHistory().
		acquire(1, "k", "a", ms(0), ms(10), ms(1000), ms(990)).
		read(1, "k", "a", 3, ms(20), ms(21)).
		refusedRenewal("", 5, "k", "a", ms(400), ms(410), ms(1000)).
		write(history.Fail, 1, "k", "a", 4, 3, ms(600), ms(610))
	r, found = badUsesOf(t, b)
	assert.Equal(t, Valid, r.Verdict, r.Reason)
	assert.Empty(t, found)
}

// A read back of a refused acquire's key that a node did not answer, while
// the run's own fault had killed (or stopped) that node, is impossible,
// not missing: the run keeps its verdict, and says so. The look-alikes stay
// unknown: the fault on another node, the fault healed before the read, a
// fault that does not stop a node (a clock jump), a read that names no
// node (a history recorded before reads named them), and a read one of
// whose silent nodes no fault explains.
func TestARefusalWhoseNodeTheRunsFaultHadKilledIsNoMissedRead(t *testing.T) {
	read := func(b *builder, nodes string) *builder {
		return b.refused(1, "k", "a", ms(0), ms(1600), ms(1000)).
			call(history.Op{Time: ms(1601), Process: history.HarnessProcess, F: history.Inspect, Key: "k", Lease: "a", Owner: "tok-a"}, history.Info, ms(1605),
				func(c *history.Op) { c.Error, c.Node = "redis-1: EOF", nodes })
	}
	r, found := badUsesOf(t, read(newHistory().fault("kill", "redis-1", ms(1500), ms(3000)), "redis-1"))
	assert.Empty(t, found)
	assert.Equal(t, Valid, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "The key of 1 refused acquire could not be read back, its node down by the run's own fault (the first: lease a on key \"k\" at 1.601s: redis-1: EOF (kill(redis-1))).")
	assert.EqualValues(t, 1, r.Metrics["inspects_impossible"])
	r, _ = badUsesOf(t, read(newHistory().fault("pause-node", "redis-1", ms(1500), ms(3000)), "redis-1"))
	assert.Equal(t, Valid, r.Verdict, "a frozen node answers nothing either: %s", r.Reason)
	// One kill of two nodes (failover-redlock's kill-minority), named in
	// its own order: the audit's redlock-go cells.
	r, _ = badUsesOf(t, read(newHistory().fault("kill", "redis-5,redis-4", ms(1500), ms(3000)), "redis-4,redis-5"))
	assert.Equal(t, Valid, r.Verdict, "both silent nodes killed by one fault: %s", r.Reason)
	assert.Contains(t, r.Reason, "EOF (kill(redis-5,redis-4))).")
	// What the fault declares decides, not its name: a fault from outside
	// deadbolt that kills, and one named kill that only moves a clock.
	r, _ = badUsesOf(t, read(newHistory().faultDoing("zap", "redis-1", history.Effects{Kills: true}, ms(1500), ms(3000)), "redis-1"))
	assert.Equal(t, Valid, r.Verdict, "a declared kill: %s", r.Reason)
	r, _ = badUsesOf(t, read(newHistory().faultDoing("kill", "redis-1", history.Effects{MovesClock: true}, ms(1500), ms(3000)), "redis-1"))
	assert.Equal(t, Unknown, r.Verdict, "a kill by name that declares a clock move: %s", r.Reason)

	for name, b := range map[string]*builder{
		"the kill on another node":    read(newHistory().fault("kill", "redis-2", ms(1500), ms(3000)), "redis-1"),
		"the kill healed before":      read(newHistory().fault("kill", "redis-1", ms(500), ms(1000)), "redis-1"),
		"a clock jump on the node":    read(newHistory().fault("clock-jump", "redis-1", ms(1500), ms(3000)), "redis-1"),
		"a read that names no node":   read(newHistory().fault("kill", "redis-1", ms(1500), ms(3000)), ""),
		"one silent node unexplained": read(newHistory().fault("kill", "redis-1", ms(1500), ms(3000)), "redis-1,redis-2"),
		"a kill of other nodes":       read(newHistory().fault("kill", "redis-5,redis-4", ms(1500), ms(3000)), "redis-1,redis-4"),
		"a kill that began after it":  read(newHistory().fault("kill", "redis-1", ms(1700), ms(3000)), "redis-1"),
	} {
		r, _ := badUsesOf(t, b)
		assert.Equal(t, Unknown, r.Verdict, "%s: %s", name, r.Reason)
		assert.Contains(t, r.Reason, "could not read back the key of 1 refused acquire right after its refusal", name)
	}
}
