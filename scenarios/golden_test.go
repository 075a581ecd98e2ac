package scenarios

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/drivers"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// goldenFile froze what every registered scenario ran as (its RunSpec,
// CI flag, shipped driver and length) while the scenarios were still Go
// code, so that the files that replaced them are held to it. It is kept
// in the format of then (durations as *_ms integers, the cluster's fields
// under their Go names with DownAfter in nanoseconds, read by
// upgradeLegacy): it also shows that every scenario's run reads the same
// from the old format as from the new. Do not write it again
// (DEADBOLT_WRITE_GOLDEN) to make it pass: it would then hold the new
// format and prove nothing about the old.
const goldenFile = "testdata/runspecs.golden.json"

type goldenEntry struct {
	Spec     RunSpec `json:"spec"`
	Prepared bool    `json:"prepared"`
	CI       bool    `json:"ci"`
	Driver   string  `json:"driver_name"`
	LengthMS int64   `json:"length_ms"`
}

// goldenEntries is each scenario's RunSpec as Run writes it (seed 1, a
// fixed driver command, the image name left out: it depends on the
// machine). A scenario whose shipped driver cannot be asked for its hello
// here is described unprepared.
func goldenEntries(t *testing.T) map[string]goldenEntry {
	out := map[string]goldenEntry{}
	driver := client.Command{Path: "deadbolt", Args: []string{"client"}}
	for _, name := range Names() {
		s, err := Get(name)
		require.NoError(t, err)
		e := goldenEntry{CI: s.CI, Driver: s.Driver, LengthMS: s.Length().Milliseconds()}
		o := RunOptions{Seed: 1}
		reentrant := false
		if s.Driver == "" && !drivers.IsVersioned(s.Lock) { // a library's driver is built, not asked here
			s, err = s.apply(o)
			require.NoError(t, err, name)
			e.Prepared = true
			reentrant = o.catalogue().Reentrant(s.Lock)
		}
		kind, err := workloads.Get(s.WorkloadName())
		require.NoError(t, err)
		e.Spec = s.spec(1, driver, kind, reentrant)
		// CI and the driver's name are compared beside the spec: the
		// golden was frozen before scenario.json recorded them.
		e.Spec.Cluster.Image, e.Spec.CI, e.Spec.Scenario.Driver = "", false, ""
		out[name] = e
	}
	return out
}

func TestScenarioFilesRunAsTheGoDefinitionsDid(t *testing.T) {
	got := goldenEntries(t)
	if os.Getenv("DEADBOLT_WRITE_GOLDEN") == "1" {
		b, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.FromSlash(goldenFile), append(b, '\n'), 0o644))
		return
	}
	b, err := os.ReadFile(filepath.FromSlash(goldenFile))
	require.NoError(t, err)
	var want map[string]goldenEntry
	require.NoError(t, json.Unmarshal(b, &want))
	require.Equal(t, want, got)
}
