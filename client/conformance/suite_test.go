package conformance_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/client/conformance"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
)

func TestMain(m *testing.M) { clienttest.Main(m) }

// python is the minimal Python driver written from docs/driver-protocol.md
// alone (../testdata/minimal_driver.py), run by python3.
func python(t *testing.T) (string, string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3 is not on PATH, and under CI=true the minimal Python driver must be checked: %v", err)
		}
		t.Skipf("python3 is not on PATH, so the minimal Python driver is not checked (CI=true makes this a failure): %v", err)
	}
	script, err := filepath.Abs(filepath.Join("..", "testdata", "minimal_driver.py"))
	require.NoError(t, err)
	return py, script
}

// The suite passes for the Go driver and for the minimal Python driver,
// both serving simple; and it fails, naming the rule, for a driver whose
// launcher forks it instead of exec'ing it (the hello's pid is not the
// process the harness started, so a pause would stop the wrong one).
func TestConformance(t *testing.T) {
	c := clustertest.Start(t, conformance.Spec)
	t.Run("go", func(t *testing.T) { conformance.Run(conformance.Testing(t), c, clienttest.Command(), "simple") })
	t.Run("python-minimal", func(t *testing.T) {
		py, script := python(t)
		conformance.Run(conformance.Testing(t), c, client.Command{Path: py, Args: []string{script}}, "simple")
	})
	t.Run("a forking launcher fails the hello rule", func(t *testing.T) {
		py, script := python(t)
		forks := client.Command{Path: "/bin/sh", Args: []string{"-c", py + " " + script + "; true"}}
		rec := conformance.NewRecorder("conformance")
		conformance.Run(rec, c, forks, "simple")
		rec.Finish()
		failed := map[string]conformance.Step{}
		for _, s := range *rec.Steps {
			if !s.Passed {
				failed[s.Name] = s
			}
		}
		require.Contains(t, failed, "hello", "steps: %+v", *rec.Steps)
		require.Contains(t, strings.Join(failed["hello"].Errors, "\n"), "the hello names the process the harness started")
		require.True(t, rec.Failed())
	})
}
