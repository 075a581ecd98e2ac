package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
)

// A team's project directory, outside any checkout of deadbolt: the two
// binaries copied there, a cache of their own, and a go.mod of the team's
// that requires two lock libraries. deadbolt builds each library's driver
// from the source it carries, lists a library's knobs, runs a scenario
// file with a library at a version, and audits what the go.mod requires.
func TestTheBinariesWorkInAProjectOfTheirOwn(t *testing.T) {
	clustertest.RequireDocker(t)
	built := buildDeadbolt(t)
	project := t.TempDir()
	for _, name := range []string{"deadbolt", client.OwnName} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(built), name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(project, name), b, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(project, "go.mod"), []byte(`module example.com/team

go 1.22

require (
	github.com/bsm/redislock v0.9.4
	github.com/go-redsync/redsync/v4 v4.18.1
)
`), 0o644))
	scenario, err := filepath.Abs(filepath.Join("..", "scenarios", "suite", "pause-simple.json"))
	require.NoError(t, err)
	b, err := os.ReadFile(scenario)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(project, "mine.json"), b, 0o644))

	deadbolt := func(args ...string) (int, string) {
		cmd := exec.Command(filepath.Join(project, "deadbolt"), args...)
		cmd.Dir = project
		cmd.Env = append(os.Environ(), "DEADBOLT_CACHE="+filepath.Join(project, "cache"), "TESTCONTAINERS_RYUK_DISABLED=true")
		out, err := cmd.CombinedOutput()
		code := 0
		if err != nil {
			ee, ok := err.(*exec.ExitError)
			require.True(t, ok, "%v: %s", err, out)
			code = ee.ExitCode()
		}
		return code, string(out)
	}

	code, out := deadbolt("locks", "--options", "redsync@v4.18.1")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "max_retries")
	require.Contains(t, out, "over go-redis v9.")

	code, out = deadbolt("run", "--file", "mine.json", "--lock", "bsm@v0.9.4", "--seed", "1")
	require.Contains(t, []int{0, 1, 2}, code, "a verdict, not bad input or an error: %s", out)
	require.Contains(t, out, "pause-simple  bsm@v0.9.4")

	code, out = deadbolt("audit", "--go-mod", "./go.mod", "--failures", "pause", "--seed", "1")
	require.Contains(t, []int{0, 1}, code, out)
	require.Contains(t, out, "bsm@v0.9.4")
	require.Contains(t, out, "redsync@v4.18.1")
	require.NotContains(t, out, "run deadbolt inside the repository")
	entries, err := os.ReadDir(filepath.Join(project, "cache", "source"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "the carried source, unpacked once")
	require.False(t, strings.Contains(out, "panic"), out)
}

// A Ctrl-C while a library's driver is built ends the build, as it ends
// every other step: exit 130, soon, and no driver is kept.
func TestADriverBuildIsInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a driver through the module proxy")
	}
	t.Setenv("DEADBOLT_CACHE", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	began := time.Now()
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"run", "pause-simple", "--lock", "redsync@v4.17.0", "--seed", "1"}, &out, &errOut)
	require.Equal(t, exitInterrupted, code, "%s%s", out.String(), errOut.String())
	require.Less(t, time.Since(began), 10*time.Second, "the build ended with the interrupt")
	_, err := os.Stat(filepath.Join(os.Getenv("DEADBOLT_CACHE"), "redsync@v4.17.0", "driver"))
	require.True(t, os.IsNotExist(err), "no driver left behind: %v", err)
}
