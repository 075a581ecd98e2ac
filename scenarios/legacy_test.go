package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/nemesis"
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

// A preset's old handoff flag is its until, as a step's is: a file with
// it reads as the file with "until": "handoff", and one with both is
// refused.
func TestAPresetsHandoffFlagBecomesItsUntil(t *testing.T) {
	b, err := suiteFiles.ReadFile("suite/pause-get-then-del.json")
	require.NoError(t, err)
	require.Contains(t, string(b), `"until": "handoff"`)
	now, err := ParseFile(b)
	require.NoError(t, err)
	require.Equal(t, nemesis.UntilHandoff, now.Scenario.Fault.Until)

	old, err := ParseFile([]byte(strings.Replace(string(b), `"until": "handoff"`, `"handoff": true`, 1)))
	require.NoError(t, err)
	require.Equal(t, now.Scenario, old.Scenario)

	_, err = ParseFile([]byte(strings.Replace(string(b), `"until": "handoff"`, `"until": "handoff", "handoff": true`, 1)))
	require.ErrorContains(t, err, "fault.until: given with the old fields")
}
