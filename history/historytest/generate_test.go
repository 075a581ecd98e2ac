package historytest_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/history/historytest"
)

// A generated history is one the harness could have written: it reads back
// through history.Parse, and it exercises what real runs hold (refusals,
// unknown outcomes, late client-stamped renewals, releases after expiry).
func TestGeneratedHistoriesReadBack(t *testing.T) {
	for _, c := range []historytest.Config{
		{Seed: 1, Keys: 3, Clients: 8, Ops: 5000, Info: 0.02, Renew: 0.3, Overstay: 0.3},
		{Seed: 2, Keys: 1, Clients: 50, Ops: 5000, Info: 0.001, Renew: 0.1, DoubleHolds: 3, PlantedHold: 150 * time.Microsecond},
	} {
		h := historytest.Generate(c)
		var buf bytes.Buffer
		require.NoError(t, historytest.WriteJSONL(&buf, h.Ops))
		ops, err := history.Parse(&buf)
		require.NoError(t, err)
		require.Equal(t, h.Ops, ops)
		require.GreaterOrEqual(t, len(ops), c.Ops)
		require.Len(t, h.Planted, c.DoubleHolds)

		seen := map[string]int{}
		late := 0
		for i, op := range ops {
			if op.Type != history.Invoke {
				seen[string(op.F)+" "+string(op.Type)]++
			}
			if op.Refused {
				seen["refused"]++
			}
			if i > 0 && op.Time < ops[i-1].Time {
				late++
			}
		}
		if c.DoubleHolds > 0 {
			continue // one contended key: mostly refusals
		}
		for _, what := range []string{"acquire ok", "acquire info", "refused", "release ok", "release fail", "renew ok"} {
			require.Positive(t, seen[what], "seed %d: no %s in %v", c.Seed, what, seen)
		}
		require.Positive(t, late, "renewals are reported late")
	}
}

func TestGenerateIsSeeded(t *testing.T) {
	c := historytest.Config{Seed: 7, Keys: 2, Clients: 6, Ops: 2000, Info: 0.02, Renew: 0.2, DoubleHolds: 2}
	require.Equal(t, historytest.Generate(c), historytest.Generate(c))
	c.Seed++
	require.NotEqual(t, historytest.Generate(c).Ops, historytest.Generate(historytest.Config{Seed: 7, Keys: 2, Clients: 6, Ops: 2000}).Ops)
}
