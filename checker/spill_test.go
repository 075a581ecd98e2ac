package checker

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

// What is spilled reads back as it was written, in order, with the place
// a key's last open operation completed marked; a record long enough not
// to fit the reader's buffer reads back too.
func TestSpillReadsBackWhatItWrote(t *testing.T) {
	sp := newSpill()
	defer sp.close()
	long := string(make([]byte, 100<<10)) // longer than the reader's 64 KiB buffer
	ops := []lockOp{
		{f: history.Acquire, outcome: history.OK, key: "k", lease: "p1.1", owner: "tok", call: 1, done: 2, ttl: 30, fence: 7, invIndex: 0, doneIndex: 1, process: 1, client: 1},
		{f: history.Renew, outcome: history.Info, key: "k", lease: "p1.1", call: -3, done: noCompletion, invIndex: 2, doneIndex: -1, process: 9, client: 1, via: history.ViaExtend, began: 5},
		{f: history.Release, outcome: history.Fail, key: "j", keyID: 1, lease: "weird lease", owner: long, call: 4, done: 6, refused: true, invIndex: 3, doneIndex: 4, process: 2, client: 2, ttlSaid: 1 << 40},
	}
	for i := range ops {
		ops[i].name = nameOf(ops[i].lease) // as the reading reads it
		sp.opened(&ops[i])
	}
	for i := range ops {
		sp.put(&ops[i])
	}
	require.NoError(t, sp.flush())
	var got []lockOp
	var cuts []bool
	for i := range sp.bucketCount() {
		r := sp.reader(i)
		for {
			l, _, cut, ok := r.next()
			if !ok {
				break
			}
			got, cuts = append(got, l), append(cuts, cut)
		}
		require.NoError(t, r.err)
	}
	require.ElementsMatch(t, ops, got)
	require.ElementsMatch(t, []bool{false, false, true}, cuts, "k's last completion leaves it open (an info), j's closes it")
}

// A spill file cut short or with a changed byte is an error, never a
// panic or a made-up operation.
func TestSpillCorruptionIsAnError(t *testing.T) {
	for _, damage := range []string{"cut", "key"} {
		sp := newSpill()
		l := lockOp{f: history.Acquire, outcome: history.OK, key: "k", lease: "p1.1", owner: "tok", call: 1, done: 2}
		sp.opened(&l)
		sp.put(&l)
		require.NoError(t, sp.flush())
		f := sp.buckets[0].f
		st, err := f.Stat()
		require.NoError(t, err)
		switch damage {
		case "cut":
			require.NoError(t, f.Truncate(st.Size()-2))
		case "key":
			_, err = f.WriteAt([]byte{0x7f}, 0) // a key number past the keys
			require.NoError(t, err)
		}
		r := sp.reader(0)
		_, _, _, ok := r.next()
		require.False(t, ok, damage)
		require.Error(t, r.err, damage)
		sp.close()
	}
}

// Thousands of records, many times the reader's buffer, read back in
// order with every field and every cut mark as written, whichever record
// a refill of the buffer falls in (a record's head read before a refill
// must not be read from the buffer after it).
func TestSpillReadsBackManyRecordsWithTheirCutMarks(t *testing.T) {
	sp := newSpill()
	defer sp.close()
	rng := rand.New(rand.NewPCG(7, 8))
	var ops []lockOp
	var cuts []bool
	for i := range 20000 {
		// One to three operations open on the key at once: only the
		// completion of the last leaves it with none open.
		batch := 1 + rng.IntN(3)
		start := len(ops)
		for j := range batch {
			n := len(ops)
			ops = append(ops, lockOp{f: fCodes[rng.IntN(len(fCodes))], outcome: typeCodes[1+rng.IntN(3)], key: "k",
				lease: fmt.Sprintf("p%d.%d", i%50, i), owner: strings.Repeat("o", rng.IntN(40)), call: int64(i) * 1000,
				done: int64(i)*1000 + int64(j), ttl: 30_000_000, invIndex: int32(n), doneIndex: int32(n + batch), process: int32(i % 50)})
			ops[n].name = nameOf(ops[n].lease)
			cuts = append(cuts, j == batch-1)
		}
		for j := start; j < len(ops); j++ {
			sp.opened(&ops[j])
		}
		for j := start; j < len(ops); j++ {
			sp.put(&ops[j])
		}
	}
	require.NoError(t, sp.flush())
	r := sp.reader(0)
	for i := range ops {
		l, _, cut, ok := r.next()
		require.True(t, ok, "record %d: %v", i, r.err)
		require.Equal(t, ops[i], l, "record %d", i)
		require.Equal(t, cuts[i], cut, "record %d's cut mark", i)
	}
	_, _, _, ok := r.next()
	require.False(t, ok)
	require.NoError(t, r.err)
}
