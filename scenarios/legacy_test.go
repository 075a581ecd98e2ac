package scenarios

import (
	"encoding/json"
	"path"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/topology"
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

// Every shipped scenario file spells its cluster as files are written now:
// each key one of topology.Spec's JSON names exactly, so that nothing in it
// is upgraded as it is read.
func TestShippedFilesNameTheClustersFieldsAsTheSpecDoes(t *testing.T) {
	names := jsonFields(reflect.TypeFor[topology.Spec]())
	n := 0
	for _, dir := range []string{"suite", "findings"} {
		entries, err := suiteFiles.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			b, err := suiteFiles.ReadFile(path.Join(dir, e.Name()))
			require.NoError(t, err)
			var file struct {
				Cluster map[string]json.RawMessage `json:"cluster"`
			}
			require.NoError(t, json.Unmarshal(b, &file), e.Name())
			require.NotEmpty(t, file.Cluster, "%s/%s names no cluster", dir, e.Name())
			for key := range file.Cluster {
				_, ok := names[key]
				require.True(t, ok, "%s/%s: cluster.%s is not a name of topology.Spec", dir, e.Name(), key)
			}
			n++
		}
	}
	require.Greater(t, n, 60)
}
