package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// DEADBOLT_REDIS_IMAGE is data, never shell: a value that would run a
// command if pasted into a recipe line is only printed.
func TestMakefileDoesNotRunTheImageVariable(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	marker := filepath.Join(t.TempDir(), "ran")
	value := `x"; touch ` + marker + `; echo "`
	cmd := exec.Command("make", "-s", "-C", "../..", "image", "DEADBOLT_REDIS_IMAGE="+value)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), value)
	_, err = os.Stat(marker)
	require.True(t, os.IsNotExist(err), "the image variable ran as a command")
}
