package checker

import (
	"cmp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/history/historytest"
)

// followPorcupine must agree with porcupine on every piece it decides:
// the same verdict (legal), the same states after, the same steps. The
// pieces are runs of generated keys, legal ones and ones with planted
// double holds and operations of unknown outcome, with and without
// re-entry, some of them searched on a budget just too small.
func TestFollowPorcupineAgreesWithPorcupine(t *testing.T) {
	followed, declined, illegal := 0, 0, 0
	for i, shape := range generatedShapes {
		for _, planted := range []int{0, 3} {
			shape.Seed, shape.DoubleHolds = uint64(10+i), planted
			in, err := NewInput(historytest.Generate(shape).Ops)
			require.NoError(t, err)
			keys, byKey := searchable(in.locks)
			for _, reentrant := range []bool{false, true} {
				for _, k := range keys {
					ls := slices.SortedFunc(slices.Values(byKey[k]), func(a, b *lockOp) int { return cmp.Compare(a.call, b.call) })
					states := []any{leaseState{}}
					for start := 0; start < len(ls); start += 97 {
						piece := ls[start:min(start+97, len(ls))]
						want := &stepBudget{}
						wantStates, legal := searchPiece(reentrant, piece, states, want)
						got, steps, ok := followPorcupine(piece, states, reentrant, 0)
						switch {
						case ok:
							followed++
							require.True(t, legal, "key %s piece at %d: followed, but porcupine finds no order", k, start)
							require.Equal(t, wantStates, got, "key %s piece at %d", k, start)
							require.Equal(t, want.taken, steps, "key %s piece at %d", k, start)
							// One step less of budget and the walk gives the piece to porcupine.
							_, _, ok = followPorcupine(piece, states, reentrant, steps-1)
							require.False(t, ok)
						case legal:
							declined++
						default:
							illegal++
						}
						if legal {
							states = wantStates
						} else {
							states = []any{leaseState{}}
						}
					}
				}
			}
		}
	}
	// Two acquires at once, the later-called one granted first: porcupine
	// places the earlier one first, backs up, and finds the order.
	ttl := ms(1000)
	backs := []*lockOp{
		{f: history.Acquire, outcome: history.OK, key: "k", lease: "p1.1", call: ms(0), done: ms(100), ttl: ttl, process: 1, client: 1},
		{f: history.Acquire, outcome: history.OK, key: "k", lease: "p2.1", call: ms(10), done: ms(20), ttl: ttl, process: 2, client: 2},
		{f: history.Release, outcome: history.OK, key: "k", lease: "p2.1", call: ms(30), done: ms(40), process: 2, client: 2},
	}
	_, _, ok := followPorcupine(backs, []any{leaseState{}}, false, 0)
	require.False(t, ok, "a piece porcupine backs up on is left to it")
	_, legal := searchPiece(false, backs, []any{leaseState{}}, &stepBudget{})
	require.True(t, legal)
	t.Logf("pieces followed %d, left to porcupine and legal %d, illegal %d", followed, declined, illegal)
	require.Positive(t, followed)
	require.Positive(t, illegal, "planted double holds make some pieces illegal")
}
