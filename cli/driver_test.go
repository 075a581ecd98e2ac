package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/reports"
)

// pythonDriver is the minimal Python driver of the client tests, a lock
// written from docs/driver-protocol.md alone: its hello offers "simple" and
// declares nothing else.
func pythonDriver(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3 is not on PATH: %v", err)
		}
		t.Skipf("python3 is not on PATH: %v", err)
	}
	path, err := filepath.Abs("../client/testdata/minimal_driver.py")
	require.NoError(t, err)
	return "python3 " + path
}

// --driver's locks are the driver's: listed by `locks --driver`, checked
// against its hello before anything starts, with what it offers in the
// message; a driver that cannot start or says no hello is bad input.
func TestDriverLocksComeFromItsHello(t *testing.T) {
	py := pythonDriver(t)
	code, out, stderr := deadbolt(t, "locks", "--driver", py)
	require.Equal(t, exitOK, code, stderr)
	require.Regexp(t, `(?m)^simple\s`, out)
	require.NotContains(t, out, "redlock", "deadbolt's own locks are not the driver's")

	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"run", "expiry-simple", "--driver", py, "--lock", "redlock"}, `unknown lock "redlock": driver python3 `},
		{[]string{"run", "pause-get-then-del", "--driver", py}, `unknown lock "get-then-del": driver python3 `},
		{[]string{"scenario", "expiry-simple", "fair-queue", "--driver", py}, `unknown lock "fair": driver python3 `},
		{[]string{"run", "expiry-simple", "--driver", py, "--tls"}, "lock simple of driver python3 " + py[len("python3 "):] + " does not declare TLS"},
		{[]string{"run", "expiry-simple", "--driver", "false"}, "did not say hello"},
		{[]string{"run", "expiry-simple", "--driver", "/no/such/driver"}, "start driver /no/such/driver"},
		{[]string{"run", "expiry-simple", "--driver", `python3 "unterminated`}, "--driver: driver command"},
		{[]string{"run", "expiry-simple", "--driver", " "}, "driver command is empty"},
		{[]string{"locks", "--driver", "false"}, "did not say hello"},
	} {
		store := filepath.Join(t.TempDir(), "store")
		code, _, stderr := deadbolt(t, append(tc.args, "--store", store)...)
		if tc.args[0] == "locks" {
			code, _, stderr = deadbolt(t, tc.args...)
		}
		require.Equal(t, exitBadInput, code, "%v: %s", tc.args, stderr)
		require.Contains(t, stderr, tc.msg, "%v", tc.args)
		require.NoDirExists(t, store)
	}
}

// deadbolt's own client as --driver declares each lock's points and
// master groups in its hello, so a scenario it cannot run is refused with
// the same message as without --driver.
func TestTheGoDriverDeclaresPointsAndGroups(t *testing.T) {
	bin := buildDeadbolt(t)
	own := bin + " client"
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"run", "pause-get-then-del", "--lock", "simple"}, `lock simple of driver ` + own + ` has no point "after-get" (its points: none)`},
		{[]string{"run", "failover-redlock", "--lock", "simple"}, "runs over at most 1 master group(s), got 5"},
	} {
		code, _, stderr := deadbolt(t, append(tc.args, "--driver", own)...)
		require.Equal(t, exitBadInput, code, "%v: %s", tc.args, stderr)
		require.Contains(t, stderr, tc.msg, "%v", tc.args)
	}
	code, out, stderr := deadbolt(t, "locks", "--driver", own)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, out, "redlock")
}

// A scenario runs with another language's driver: the minimal Python
// driver's simple lock on expiry-simple, judged like deadbolt's own, the
// driver recorded in scenario.json and results.json.
func TestARunWithAPythonDriver(t *testing.T) {
	clustertest.RequireDocker(t)
	py := pythonDriver(t)
	store := t.TempDir()
	code, out, stderr := deadbolt(t, "run", "expiry-simple", "--seed", "1", "--driver", py, "--store", store)
	require.Equal(t, exitOK, code, "%s\n%s", out, stderr)
	dirs, err := filepath.Glob(filepath.Join(store, "expiry-simple", "*"))
	require.NoError(t, err)
	require.Len(t, dirs, 1)
	r, err := reports.ReadResults(filepath.Join(dirs[0], reports.ResultsFile))
	require.NoError(t, err)
	require.Equal(t, "valid", r.Verdict, r.Reason)
	require.Equal(t, py, r.Driver)
	var spec struct{ Driver []string }
	b, err := os.ReadFile(filepath.Join(dirs[0], "scenario.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &spec))
	require.Equal(t, "python3", spec.Driver[0])
	md, err := os.ReadFile(filepath.Join(dirs[0], reports.ReportFile))
	require.NoError(t, err)
	require.Contains(t, string(md), "(driver: "+py+")")
}

// deadbolt conformance tells a driver's author which rule failed: the
// minimal Python driver passes every rule; launched through a shell that
// forks it, it fails the hello rule, by name, with what was wrong.
func TestConformanceCommand(t *testing.T) {
	py := pythonDriver(t)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"conformance"}, "needs --driver"},
		{[]string{"conformance", "--driver", py, "--lock", "redlock"}, `unknown lock "redlock"`},
		{[]string{"conformance", "--driver", "false"}, "did not say hello"},
	} {
		code, _, stderr := deadbolt(t, tc.args...)
		require.Equal(t, exitBadInput, code, "%v: %s", tc.args, stderr)
		require.Contains(t, stderr, tc.msg)
	}
	clustertest.RequireDocker(t)
	code, out, stderr := deadbolt(t, "conformance", "--driver", py)
	require.Equal(t, exitOK, code, "%s\n%s", out, stderr)
	require.Contains(t, out, "ok   hello\n")
	require.Contains(t, out, "every one of")

	code, out, stderr = deadbolt(t, "conformance", "--driver", "/bin/sh -c '"+py+"; true'")
	require.Equal(t, exitContradicts, code, "%s\n%s", out, stderr)
	require.Contains(t, out, "FAIL hello\n")
	require.Contains(t, out, "the hello names the process the harness started")
	require.Contains(t, out, "ok   resource replies\n", "the other rules still run")
	require.NotContains(t, out, "Error Trace", "no Go stack for a driver's author")
}

// A scenario that runs a shipped driver asks it for its hello before
// anything starts: an interpreter without redis-py is bad input with what
// to do, and no store. (Outside a checkout the script is the source the
// binary carries: TestTheBinariesWorkInAProjectOfTheirOwn.)
func TestAShippedDriverThatCannotStartIsBadInput(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skipf("no /usr/bin/python3: %v", err)
	}
	store := filepath.Join(t.TempDir(), "store")
	// -S leaves Debian's dist-packages, where python3-redis lives, off the path.
	code, _, stderr := deadbolt(t, "run", "pause-redispy", "--driver", "/usr/bin/python3 -S ../drivers/redispy/driver.py", "--store", store)
	require.Equal(t, exitBadInput, code, stderr)
	require.Contains(t, stderr, "cannot import redis-py")
	require.Contains(t, stderr, "install Debian's python3-redis")
	require.NoDirExists(t, store)
}
