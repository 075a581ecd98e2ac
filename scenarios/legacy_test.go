package scenarios

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAStepsOldBooleansBecomeItsAimAndUntil(t *testing.T) {
	for _, tc := range []struct {
		old  map[string]any
		want map[string]any
		err  string
	}{
		{map[string]any{"under": true, "asked": true, "failover": true}, map[string]any{"aim": "asked", "until": "failover"}, ""},
		{map[string]any{"under": true}, map[string]any{"aim": "grant"}, ""},
		{map[string]any{"handoff": true, "under": false}, map[string]any{"until": "handoff"}, ""},
		{map[string]any{"asked": true}, nil, "asked: takes an acquire under the fault"},
		{map[string]any{"handoff": true, "failover": true}, nil, "not both"},
		{map[string]any{"under": true, "aim": "grant"}, nil, "aim: given with the old fields"},
		{map[string]any{"under": "yes"}, nil, "under: want true or false"},
	} {
		err := upgradeStep(tc.old)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, tc.old)
	}
}
