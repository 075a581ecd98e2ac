package checker

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/history/historytest"
)

// Histories from historytest's simulated lease server: the legal ones must
// all pass, and every double hold planted in the others must be found, by
// the double-holds checker (the very pair of leases) and by the lease-lock
// model (the key), short holds included.

// generatedShapes are the histories the tests generate: many keys, one
// contended key, long and very short holds.
var generatedShapes = []historytest.Config{
	{Keys: 10, Clients: 20, Ops: 20000, Info: 0.002, Renew: 0.1, Overstay: 0.05},
	{Keys: 1, Clients: 50, Ops: 10000, Info: 0.001, Renew: 0.1, Overstay: 0.05},
	{Keys: 3, Clients: 10, Ops: 10000, Info: 0.005, Renew: 0.2, Overstay: 0.1, MinHold: 20 * time.Microsecond, MaxHold: 200 * time.Microsecond},
	// long keys, searched in pieces
	{Keys: 2, Clients: 4, Ops: 30000, Info: 0.002, Renew: 0.1, Overstay: 0.05},
}

// A long legal key is proven legal piece by piece; a long key with a
// planted double hold is not (the whole key is then searched, and found
// illegal).
func TestLongKeysAreSearchedInPieces(t *testing.T) {
	shape := generatedShapes[len(generatedShapes)-1]
	shape.Seed = 5
	legal := historytest.Generate(shape)
	shape.DoubleHolds = 2
	planted := historytest.Generate(shape)
	for _, tc := range []struct {
		ops   []history.Op
		legal bool
	}{{legal.Ops, true}, {planted.Ops, false}} {
		in, err := NewInput(tc.ops)
		require.NoError(t, err)
		keys, byKey := searchable(in.locks)
		for _, k := range keys {
			require.Greater(t, len(byKey[k]), 4*pieceOps, "a key long enough for several pieces")
		}
		pieces := 0
		for _, k := range keys {
			if legalInPieces(newPieceChain(false, 0), byKey[k]) {
				pieces++
			}
		}
		if tc.legal {
			assert.Equal(t, len(keys), pieces, "every legal key is proven in pieces")
		} else {
			assert.Less(t, pieces, len(keys), "a key with a planted double hold is never proven legal")
		}
	}
}

func TestGeneratedLegalHistoriesPass(t *testing.T) {
	for i, shape := range generatedShapes {
		for seed := uint64(1); seed <= 3; seed++ {
			shape.Seed = seed
			h := historytest.Generate(shape)
			r := Check(h.Ops, Options{})
			require.Equal(t, Valid, r.Verdict, "shape %d seed %d: %s %v", i, seed, r.Reason, r.Anomalies)
			require.Positive(t, r.Stats.AcquiresOK)
		}
	}
}

func TestGeneratedPlantedDoubleHoldsAreFound(t *testing.T) {
	for i, shape := range generatedShapes {
		for _, hold := range []time.Duration{0, 150 * time.Microsecond, 20 * time.Microsecond} {
			shape.Seed, shape.DoubleHolds, shape.PlantedHold = uint64(i+1), 3, hold
			name := fmt.Sprintf("shape %d, planted hold %s", i, hold)
			h := historytest.Generate(shape)
			require.Len(t, h.Planted, 3, name)
			r := Check(h.Ops, Options{})
			require.Equal(t, Invalid, r.Verdict, "%s: %s", name, r.Reason)

			dh, _ := r.Check("double-holds")
			found := map[[2]string]bool{}
			for _, d := range dh.Details.([]DoubleHold) {
				found[[2]string{d.First.Lease, d.Second.Lease}] = true
				found[[2]string{d.Second.Lease, d.First.Lease}] = true
			}
			assert.Len(t, dh.Details, len(h.Planted), "%s: one double hold per plant, nothing else", name)
			ll, _ := r.Check("lease-lock")
			require.Equal(t, Invalid, ll.Verdict, "%s: %s", name, ll.Reason)
			failed := ll.Details.(*LeaseLockResult).FailedKeys
			for _, p := range h.Planted {
				assert.True(t, found[[2]string{p.Victim, p.Thief}], "%s: planted %+v not found", name, p)
				assert.Contains(t, failed, p.Key, "%s: the lease-lock model misses %+v", name, p)
			}
		}
	}
}
