package scenarios

import (
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
