package scenarios

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// everyField is a scenario with every field of the spec set, so that a
// knob added to Scenario is carried by the test below with no other edit
// (and a field the sample leaves zero fails it: set the new one here).
func everyField(t *testing.T) Scenario {
	s, err := Get("failover-simple")
	require.NoError(t, err)
	s.Expect, s.Mix, s.Reenter, s.Queue, s.Fence = Unsafe, []LockMix{{Lock: "bsm", Clients: 1}}, true, true, true
	s.RunOn, s.Driver, s.Upstream = Duration(7*time.Second), "redispy", "https://example.org/issue/1"
	s.LockOptions.TimeoutMS = 500
	return s
}

func TestEveryFieldOfTheSpecRoundTripsThroughFileRunAndScenarioJSON(t *testing.T) {
	s := everyField(t)
	v := reflect.ValueOf(s)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Tag.Get("json") == "-" {
			continue // not the spec's: where the file lies (Finding)
		}
		require.False(t, v.Field(i).IsZero(), "everyField leaves %s zero: set it, so the round trip carries it", f.Name)
	}
	// The file a user writes.
	b, err := MarshalFile(s.Spec())
	require.NoError(t, err)
	f, err := ParseFile(b)
	require.NoError(t, err)
	require.Equal(t, s.Spec(), f.Scenario.Spec(), "file:\n%s", b)
	// The run's scenario.json, and the run a stored one replays.
	kind, err := workloads.Get(f.Scenario.WorkloadName())
	require.NoError(t, err)
	run := f.Scenario.spec(9, client.Command{Path: "deadbolt", Args: []string{"client"}}, kind, true)
	dir := t.TempDir()
	require.NoError(t, writeSpec(dir, run))
	stored, err := ReadSpec(dir)
	require.NoError(t, err)
	require.Equal(t, run, stored)
	b, err = MarshalFile(stored)
	require.NoError(t, err)
	replay, err := ParseFile(b)
	require.NoError(t, err)
	require.Equal(t, uint64(9), *replay.Seed)
	want := s.Spec().Scenario
	want.Cluster = want.Cluster.Defaults() // a run records its cluster whole
	require.Equal(t, want, replay.Scenario.Spec().Scenario)
}

// TestAStoredRunOfTheOldFormatReadsAsTheSameRun: the golden file holds
// scenario.json as runs stored it before durations were strings (ttl_ms
// and so on) and before the cluster's fields had JSON names ("Topology",
// "DownAfter" in nanoseconds); each, as a stored run's scenario.json, reads
// (ReadSpec) and replays (ParseFile) as the run the scenario's file makes
// now.
func TestAStoredRunOfTheOldFormatReadsAsTheSameRun(t *testing.T) {
	b, err := os.ReadFile(filepath.FromSlash(goldenFile))
	require.NoError(t, err)
	var old map[string]struct {
		Spec json.RawMessage `json:"spec"`
	}
	require.NoError(t, json.Unmarshal(b, &old))
	now := goldenEntries(t)
	require.NotEmpty(t, old)
	for name, e := range old {
		require.Contains(t, string(e.Spec), `"ttl_ms"`, "%s: the golden keeps the old format", name)
		require.Contains(t, string(e.Spec), `"DownAfter": `, "%s: the golden keeps the cluster's old names", name)
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, SpecFile), e.Spec, 0o644))
		stored, err := ReadSpec(dir)
		require.NoError(t, err, name)
		require.Equal(t, now[name].Spec, stored, name)
		if now[name].Driver != "" {
			continue // the golden leaves out driver_name, without which the lock is unknown
		}
		replay, err := ParseFile(e.Spec)
		require.NoError(t, err, name)
		require.Equal(t, now[name].Spec.Scenario, replay.Scenario, name)
	}
}
