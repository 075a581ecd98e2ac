package checker

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

// Histories at a window's edge: each is checked both ways with a cut at
// every place one may be taken, must say what the whole-history check
// says, and says what it should.

// windowed checks ops both ways with tiny windows, requires the same
// report, and returns it with the windows cut and keys checked whole
// after all.
func windowed(t *testing.T, ops []history.Op, opts Options) (report string, cuts, redone int64) {
	t.Helper()
	defer tinyWindows()()
	c, r := windowCounts.cuts.Load(), windowCounts.redone.Load()
	k, w := bothWays(ops, opts)
	require.Equal(t, w, k)
	return k, windowCounts.cuts.Load() - c, windowCounts.redone.Load() - r
}

// sweeps are the checkers that judge a window alone: with lease-lock, a
// key with a double hold is illegal, and always checked whole.
var sweeps = Options{Checkers: []string{"double-holds", "fairness", "liveness", "releases", "replies"}}

// quiet adds n acquire-release rounds of process p on key from t, 10ms
// apart: places a key can be cut.
func quiet(b *builder, p int, key, lease string, t int64, n int) *builder {
	for i := range n {
		at := t + ms(10*int64(i))
		l := lease + string(rune('a'+i))
		b.acquire(p, key, l, at, at+ms(1), ms(10), 0).release(history.OK, p, key, l, at+ms(2), at+ms(3))
	}
	return b
}

// No operation is open between A's ok and B's acquire, yet A's lease is
// live by its TTL: no cut there, and the double hold is found.
func TestWindowDoubleHoldAcrossQuietPlace(t *testing.T) {
	b := quiet(newHistory(), 9, "k", "q", 0, 3)
	b.acquire(1, "k", "A", ms(100), ms(101), ms(100), 0).
		acquire(2, "k", "B", ms(150), ms(151), ms(100), 0).
		release(history.OK, 1, "k", "A", ms(180), ms(181)).
		release(history.OK, 2, "k", "B", ms(190), ms(191))
	quiet(b, 9, "k", "r", ms(300), 3)
	ops := b.build()
	rep, cuts, redone := windowed(t, ops, sweeps)
	assert.Contains(t, rep, `"kind":"double-hold"`)
	assert.Contains(t, rep, `"leases":["A","B"]`)
	assert.Positive(t, cuts)
	assert.Zero(t, redone)
	_, _, redone = windowed(t, ops, Options{})
	assert.Equal(t, int64(1), redone, "lease-lock cannot prove the key legal")
}

// A's lease ran out (no release: it overstays) before B's grant: a cut
// may fall between them, A's segment is emitted there, and its late
// release, after the cut, is judged as the whole history judges it.
func TestWindowRunOutLeaseReleasedAfterCut(t *testing.T) {
	for _, tc := range []struct {
		release history.Type
		bad     bool
	}{{history.Fail, false}, {history.OK, true}} {
		b := quiet(newHistory(), 9, "k", "q", 0, 3)
		b.acquire(1, "k", "A", ms(100), ms(101), ms(10), 0).
			refused(3, "k", "x1", ms(120), ms(121), ms(10)).
			acquire(2, "k", "B", ms(150), ms(151), ms(10), 0).
			release(tc.release, 1, "k", "A", ms(152), ms(153)).
			release(history.OK, 2, "k", "B", ms(190), ms(191))
		ops := b.build()
		windowed(t, ops, Options{})
		rep, cuts, redone := windowed(t, ops, sweeps)
		assert.NotContains(t, rep, `"kind":"double-hold"`, "A ran out before B's grant")
		assert.Equal(t, tc.bad, strings.Contains(rep, `"kind":"release-not-held"`), "A's %s release after B's grant", tc.release)
		assert.Positive(t, cuts)
		assert.Zero(t, redone)
	}
}

// A renewal after a cut revives a run-out lease: its new window overlaps
// B's grant, which the whole history finds too.
func TestWindowRevivedLeaseAfterCut(t *testing.T) {
	b := quiet(newHistory(), 9, "k", "q", 0, 3)
	b.acquire(1, "k", "A", ms(100), ms(101), ms(10), 0).
		refused(3, "k", "x1", ms(120), ms(121), ms(10)).
		renew(4, "k", "A", ms(130), ms(131), ms(10), 0).
		acquire(2, "k", "B", ms(135), ms(136), ms(10), 0).
		release(history.OK, 1, "k", "A", ms(170), ms(171)).
		release(history.OK, 2, "k", "B", ms(190), ms(191))
	ops := b.build()
	windowed(t, ops, Options{})
	rep, cuts, redone := windowed(t, ops, sweeps)
	assert.Contains(t, rep, `"kind":"double-hold"`)
	assert.Positive(t, cuts)
	assert.Zero(t, redone)
}

// A key stuck after A's lease ran out, refused acquires spread over many
// windows: the stretch is found once, naming A, whose release comes in a
// later window still.
func TestWindowStuckKeyAcrossWindows(t *testing.T) {
	b := quiet(newHistory(), 9, "k", "q", 0, 3)
	b.acquire(1, "k", "A", ms(100), ms(101), ms(10), 0)
	for i := range int64(8) {
		at := ms(120 + 20*i)
		b.refused(3, "k", "x"+string(rune('a'+i)), at, at+ms(1), ms(10))
	}
	b.release(history.OK, 1, "k", "A", ms(300), ms(301))
	quiet(b, 9, "k", "r", ms(400), 2)
	rep, cuts, redone := windowed(t, b.build(), Options{})
	assert.Contains(t, rep, `"kind":"liveness"`)
	assert.Contains(t, rep, `"last_lease":"A"`)
	assert.Contains(t, rep, `"release":"ok"`)
	assert.Greater(t, cuts, int64(4))
	assert.Zero(t, redone)
}

// What windows cannot settle exactly is checked whole: a renewal stamped
// before a cut but recorded after it, and a release before its lease's
// acquire in an earlier window.
func TestWindowKeysCheckedWhole(t *testing.T) {
	b := quiet(newHistory(), 9, "k", "q", 0, 3)
	b.acquire(1, "k", "A", ms(100), ms(101), ms(10), 0).
		release(history.OK, 1, "k", "A", ms(106), ms(107)).
		renew(4, "k", "A", ms(104), ms(105), ms(10), 0).reportedAt(ms(140))
	b.ops[len(b.ops)-1].Stamp, b.ops[len(b.ops)-2].Stamp = history.StampClient, history.StampClient
	quiet(b, 9, "k", "r", ms(120), 3)
	_, _, redone := windowed(t, b.build(), Options{})
	assert.Equal(t, int64(1), redone, "a late renewal")

	b = quiet(newHistory(), 9, "k", "q", 0, 2)
	b.release(history.OK, 1, "k", "A", ms(50), ms(51))
	quiet(b, 9, "k", "r", ms(60), 2)
	b.acquire(1, "k", "A", ms(100), ms(101), ms(10), 0)
	_, _, redone = windowed(t, b.build(), sweeps)
	assert.Equal(t, int64(1), redone, "a release before its acquire")
}
