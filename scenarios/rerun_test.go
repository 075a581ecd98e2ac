package scenarios

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/reports"
)

// A run re-runs as one `deadbolt run` of its scenario, seed and options;
// the server it ran is named when no option did (a matrix's servers axis,
// DEADBOLT_REDIS_IMAGE), and a run no command line named (a sweep's point,
// a shrink's trial) re-runs from the scenario.json it left.
func TestARunRecordsItsRerun(t *testing.T) {
	dir := filepath.Join("store", "pause-simple", "20260102T030405.000Z")
	valkey := reports.Server{Name: "valkey-8.1", Image: "deadbolt/valkey:8.1"}
	dflt := reports.Server{Name: reports.DefaultServer}

	o := RunOptions{Seed: 42, Invocation: &Invocation{Flags: []string{"--lock", "redlock", "--tls"}}}
	require.Equal(t, []string{"run", "pause-simple", "--seed", "42", "--lock", "redlock", "--tls"}, o.rerun("pause-simple", dir, dflt))
	require.Equal(t, []string{"run", "pause-simple", "--seed", "42", "--lock", "redlock", "--tls", "--server", "valkey-8.1"}, o.rerun("pause-simple", dir, valkey),
		"the server the cell ran, when no option named it")

	o.Invocation.Flags = []string{"--server", "valkey-8.1"}
	require.Equal(t, []string{"run", "failover-simple@redsync@v4.0.4", "--seed", "42", "--server", "valkey-8.1"}, o.rerun("failover-simple@redsync@v4.0.4", dir, valkey),
		"a matrix cell by its name, its server once")

	o.Invocation = &Invocation{File: "mine.json", Flags: []string{"--driver", "python3 d.py"}}
	require.Equal(t, []string{"run", "--file", "mine.json", "--seed", "42", "--driver", "python3 d.py"}, o.rerun("mine", dir, valkey),
		"a file's run reads the file again, whose cluster names its image")

	o.Invocation = nil
	require.Equal(t, []string{"run", "--file", filepath.Join(dir, SpecFile), "--seed", "42"}, o.rerun("pause-simple@pause-ttl=0.5", dir, valkey))
}

// A matrix cell's and a suite's finding version's names are scenario
// names: `deadbolt run NAME` gets the same scenario back.
func TestRerunNamesGetTheScenarioBack(t *testing.T) {
	tmpl, err := Get("failover-simple")
	require.NoError(t, err)
	cell := Cell(tmpl, "redlock")
	got, err := Get(cell.Name)
	require.NoError(t, err)
	require.Equal(t, cell.Name, got.Name)
	require.Equal(t, cell.Lock, got.Lock)
	for _, n := range CISuite() {
		s, err := Get(n)
		require.NoError(t, err)
		require.Equal(t, n, s.Name)
	}
}
