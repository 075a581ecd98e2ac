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
	"github.com/deadbolt-lab/deadbolt/drivers"
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

// redispy is the shipped redis-py driver (drivers/redispy), whose
// interpreter needs Debian's python3-redis.
func redispy(t *testing.T) client.Command {
	t.Helper()
	d, err := drivers.Get("redispy")
	require.NoError(t, err)
	if out, err := exec.Command(d.Interpreter, "-c", "import redis").CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s cannot import redis (%v: %s), and under CI=true the redis-py driver must be checked: install python3-redis (make test does)", d.Interpreter, err, out)
		}
		t.Skipf("%s cannot import redis (%v: %s), so the redis-py driver is not checked (install python3-redis; CI=true makes this a failure)", d.Interpreter, err, out)
	}
	cmd, err := d.Command()
	require.NoError(t, err)
	return cmd
}

// The suite passes for the Go driver and for the minimal Python driver,
// both serving simple, and for redis-py's own Lock; and it fails, naming the rule, for a driver whose
// launcher forks it instead of exec'ing it (the hello's pid is not the
// process the harness started, so a pause would stop the wrong one).
func TestConformance(t *testing.T) {
	c := clustertest.Start(t, conformance.Spec)
	t.Run("go", func(t *testing.T) { conformance.Run(conformance.Testing(t), c, clienttest.Command(), "simple") })
	t.Run("python-minimal", func(t *testing.T) {
		py, script := python(t)
		conformance.Run(conformance.Testing(t), c, client.Command{Path: py, Args: []string{script}}, "simple")
	})
	t.Run("redispy", func(t *testing.T) { conformance.Run(conformance.Testing(t), c, redispy(t), "redispy") })
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
