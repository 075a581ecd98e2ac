package cli

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// --target runs a scenario against a deployment someone else started (here
// containers the test starts itself), with no Docker at all: the binary
// runs with DOCKER_HOST pointing nowhere, so a container it tried to start
// would fail the run. A node fault is refused, with why, before anything.
func TestTargetRunsAgainstSomeoneElsesDeployment(t *testing.T) {
	clustertest.RequireDocker(t)
	theirs := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1, Resource: true, Persistence: cluster.PersistNone})
	// The target is reached with a lock user's credentials, the least any
	// deployment would give a lock user; they stay out of scenario.json.
	e := theirs.Endpoints()
	require.Equal(t, cluster.LockUser, e.Username)
	b, err := json.Marshal(e)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "target.json")
	require.NoError(t, os.WriteFile(file, b, 0o644))
	bin := buildDeadbolt(t)
	deadboltNoDocker := func(args ...string) (int, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "DOCKER_HOST=unix:///nonexistent/docker.sock")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(out)
		}
		require.NoError(t, err, string(out))
		return 0, string(out)
	}

	store := t.TempDir()
	code, out := deadboltNoDocker("run", "pause-simple", "--target", file, "--seed", "1", "--store", store)
	require.Equal(t, exitOK, code, out)
	require.Contains(t, out, "no container starts")
	require.Contains(t, out, "pause-simple: invalid (expected unsafe)")
	dirs, err := filepath.Glob(filepath.Join(store, "pause-simple", "*"))
	require.NoError(t, err)
	require.Len(t, dirs, 1)
	spec, err := scenarios.ReadSpec(dirs[0])
	require.NoError(t, err)
	require.NotNil(t, spec.Target, "scenario.json records the target")
	raw, err := os.ReadFile(filepath.Join(dirs[0], scenarios.SpecFile))
	require.NoError(t, err)
	require.NotContains(t, string(raw), e.Password, "scenario.json never holds a password")
	require.Contains(t, string(raw), "(redacted)")
	require.NoError(t, theirs.Healthy(t.Context()), "the deployment is left as it was")

	// A link fault: the harness's proxies sit in front of the target.
	code, out = deadboltNoDocker("run", "delay-bsm", "--target", file, "--seed", "1", "--store", store)
	require.Equal(t, exitOK, code, out)
	require.Contains(t, out, "delay-bsm: invalid (expected unsafe)")

	// The same link aimed by role: the primary found when the fault strikes.
	suite, err := os.ReadFile(filepath.Join("..", "scenarios", "suite", "delay-bsm.json"))
	require.NoError(t, err)
	byRole := strings.Replace(string(suite), `"link:0:redis-1"`, `"link:0:primary"`, 1)
	require.NotEqual(t, string(suite), byRole)
	scenarioFile := filepath.Join(t.TempDir(), "delay-by-role.json")
	require.NoError(t, os.WriteFile(scenarioFile, []byte(byRole), 0o644))
	code, out = deadboltNoDocker("run", "--file", scenarioFile, "--target", file, "--seed", "1", "--store", store)
	require.Equal(t, exitOK, code, out)
	require.Contains(t, out, "delay-bsm: invalid (expected unsafe)")

	// A lock key someone else holds: bad input, before any client starts.
	sc, err := scenarios.Get("pause-simple")
	require.NoError(t, err)
	clients, err := e.Clients(endpoints.DefaultClientOptions())
	require.NoError(t, err)
	require.NoError(t, clients[0].Set(t.Context(), sc.Keys[0], "someone-elses", 0).Err())
	code, out = deadboltNoDocker("run", "pause-simple", "--target", file, "--seed", "1", "--store", store)
	require.Equal(t, exitBadInput, code, out)
	require.Contains(t, out, "already exist on master group 1")
	// And a suite of runs with it: refused as a whole before its first run.
	code, out = deadboltNoDocker("scenario", "delay-bsm", "pause-simple", "--target", file, "--seed", "1", "--store", store)
	require.Equal(t, exitBadInput, code, out)
	require.Contains(t, out, "already exist on master group 1")
	require.NotContains(t, out, "delay-bsm: ", "no run started")
	require.NoError(t, clients[0].Del(t.Context(), sc.Keys[0]).Err())
	clients[0].Close()

	code, out = deadboltNoDocker("run", "failover-simple", "--target", file, "--store", store)
	require.Equal(t, exitBadInput, code, out)
	require.Contains(t, out, "injects node faults (isolate-primary on primary)")
	require.Contains(t, out, "--target runs only client and link faults")
}
