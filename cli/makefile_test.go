package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// makeImageWith runs `make image` with variable set to a value that would
// run a command if pasted into a recipe line, and reports whether it ran.
func makeImageWith(t *testing.T, variable string, env ...string) (value string, out []byte, err error, ran bool) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	marker := filepath.Join(t.TempDir(), "ran")
	value = `x"; touch ` + marker + `; echo "`
	cmd := exec.Command("make", "-s", "-C", "..", "image", variable+"="+value)
	cmd.Env = append(os.Environ(), env...)
	out, err = cmd.CombinedOutput()
	_, serr := os.Stat(marker)
	return value, out, err, !os.IsNotExist(serr)
}

// DEADBOLT_REDIS_IMAGE is data, never shell: a value that would run a
// command if pasted into a recipe line is only printed.
func TestMakefileDoesNotRunTheImageVariable(t *testing.T) {
	value, out, err, ran := makeImageWith(t, "DEADBOLT_REDIS_IMAGE")
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), value)
	require.False(t, ran, "the image variable ran as a command")
}

// SERVER is data too: an unknown value reaches build.sh as one argument,
// which refuses it, and never runs as a command.
func TestMakefileDoesNotRunTheServerVariable(t *testing.T) {
	_, out, err, ran := makeImageWith(t, "SERVER", "DEADBOLT_REDIS_IMAGE=")
	require.Error(t, err, "%s", out)
	require.Contains(t, string(out), "unknown server")
	require.False(t, ran, "the server variable ran as a command")
}
