package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// A bad scenario file exits 254 with the field's path, before any
// container starts.
func TestRunFileRefusesBadFieldsWithTheirPath(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	base := `"scenario": "x", "lock": "simple", "workload": "mutex", "nemesis": "plan", "cluster": {"topology": "sentinel"},
	  "clients": 2, "keys": ["k0"], "ttl_ms": "1s"`
	for _, tc := range []struct{ body, msg string }{
		{`{` + base + `, "time_ms": "10s", "fault": {"steps": [{"fault": "kill"}, {"fault": "kill", "target": "rack:2"}]}}`, `fault.steps[1].target: bad target "rack:2"`},
		{`{` + base + `, "time_ms": "10s", "fault": {}, "colour": 1}`, `colour: unknown field`},
		{`{` + base + `, "time_ms": "10s", "fault": {}, "settle_ms": "a while"}`, `settle_ms: bad duration "a while"`},
		{`{` + base + `, "time_ms": "10s", "fault": {}, "target": {"topology": "sentinel"}}`, `give --target FILE`},
		{`{` + base + `, "time_ms": "1s", "fault": {"steps": [{"fault": "kill"}]}}`, `needs --time of at least`}, // Prepare's, after the file's
		// A plan takes only steps: what only the random schedule reads is
		// refused, by name, not ignored.
		{`{` + base + `, "time_ms": "10s", "fault": {"steps": [{"fault": "kill"}], "every": "1s", "faults": ["kill"]}}`, `fault.faults: nemesis plan does not take it (it takes: steps)`},
	} {
		code, _, stderr := deadbolt(t, "run", "--file", write("s.json", tc.body), "--store", filepath.Join(dir, "store"))
		require.Equal(t, exitBadInput, code, stderr)
		require.Contains(t, stderr, tc.msg)
	}
	code, _, stderr := deadbolt(t, "run", "failover-simple", "--file", write("t.json", "{}"))
	require.Equal(t, exitBadInput, code)
	require.Contains(t, stderr, "not both")
	_, err := os.Stat(filepath.Join(dir, "store"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing is made for a refused file")
}

// A scenario file is data: a driver command it names never runs unless the
// command line names a driver. The file's command would create a marker;
// the run exits 254 before anything starts, names the command and how to
// allow it, and the marker does not exist. A stored run of a library at a
// version replays with the driver deadbolt builds for its lock, whatever
// path its scenario.json recorded.
func TestRunFileRunsNoCommandTheFileNames(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	file := filepath.Join(dir, "f.json")
	body := `{"scenario": "x", "lock": "simple", "workload": "mutex", "nemesis": "pause-client", "fault": {"key": "k0"},
	  "cluster": {"topology": "independent", "masters": 1}, "clients": 2, "keys": ["k0"], "ttl": "1s", "time": "10s",
	  "driver": ["sh", "-c", "touch ` + marker + `; exec python3 driver.py"]}`
	require.NoError(t, os.WriteFile(file, []byte(body), 0o644))
	code, _, stderr := deadbolt(t, "run", "--file", file, "--store", filepath.Join(dir, "store"))
	require.Equal(t, exitBadInput, code, stderr)
	require.Contains(t, stderr, "deadbolt runs no command a file names")
	require.Contains(t, stderr, "touch "+marker)
	require.Contains(t, stderr, "--driver 'sh -c")
	_, err := os.Stat(marker)
	require.ErrorIs(t, err, os.ErrNotExist, "the file's command ran")
	_, err = os.Stat(filepath.Join(dir, "store"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing is made for a refused file")

	versioned := `{"scenario": "x", "lock": "redsync@v4.0.3", "workload": "mutex", "nemesis": "pause-client", "fault": {"key": "k0"},
	  "cluster": {"topology": "independent", "masters": 1}, "clients": 2, "keys": ["k0"], "ttl": "1s", "time": "10s",
	  "driver": ["/home/someone/.cache/deadbolt/drivers/redsync@v4.0.3/driver"]}`
	f, err := scenarios.ParseFile([]byte(versioned))
	require.NoError(t, err)
	require.Nil(t, f.Driver, "a library's driver is named by its lock, not by the path a run recorded")
}

// A file names an image deadbolt built, or none: an image it did not
// build (no recipe label) or one the engine lacks is refused before any
// container starts.
func TestRunFileStartsOnlyAnImageDeadboltBuilt(t *testing.T) {
	clustertest.RequireDocker(t)
	dir := t.TempDir()
	ctx := filepath.Join(dir, "ctx")
	require.NoError(t, os.MkdirAll(ctx, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ctx, "Dockerfile"), []byte("FROM scratch\nCOPY Dockerfile /\n"), 0o644))
	const unlabelled = "deadbolt-test/unlabelled:1"
	out, err := exec.Command("docker", "build", "-q", "-t", unlabelled, ctx).CombinedOutput()
	require.NoError(t, err, string(out))
	t.Cleanup(func() { exec.Command("docker", "image", "rm", "-f", unlabelled).Run() })
	for image, want := range map[string]string{
		unlabelled:                "was not built by deadbolt",
		"deadbolt-test/nowhere:1": "is not on the engine",
		cluster.Servers[0].Image:  "",
	} {
		file := filepath.Join(dir, "f.json")
		body := `{"scenario": "x", "lock": "simple", "workload": "mutex", "nemesis": "pause-client", "fault": {"key": "k0"},
		  "cluster": {"topology": "independent", "masters": 1, "image": "` + image + `"}, "clients": 2, "keys": ["k0"], "ttl": "1s", "time": "10s"}`
		require.NoError(t, os.WriteFile(file, []byte(body), 0o644))
		if want == "" {
			continue // the default image deadbolt built: its run is any other test's
		}
		code, _, stderr := deadbolt(t, "run", "--file", file, "--store", filepath.Join(dir, "store"))
		require.Equal(t, exitBadInput, code, stderr)
		require.Contains(t, stderr, "cluster.image: ")
		require.Contains(t, stderr, want)
	}
}
