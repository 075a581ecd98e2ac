package drivers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every shipped driver's script is found from inside the repository (here
// drivers/, below the root it is relative to), run by its interpreter.
func TestShippedDriversAreFoundFromInsideTheRepository(t *testing.T) {
	require.NotEmpty(t, Names())
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	for _, name := range Names() {
		d, err := Get(name)
		require.NoError(t, err)
		require.True(t, filepath.IsAbs(d.Interpreter), "%s: an interpreter found on PATH could be another one", name)
		require.NotEmpty(t, d.Needs, name)
		cmd, err := d.Command()
		require.NoError(t, err, name)
		require.Equal(t, d.Interpreter, cmd.Path)
		require.Equal(t, []string{filepath.Join(root, d.Script)}, cmd.Args)
	}
}

// A script that is nowhere above the working directory or the binary is an
// error that says where it looked and what to do.
func TestAMissingScriptSaysWhereItLooked(t *testing.T) {
	t.Chdir(t.TempDir())
	d := Driver{Name: "gone", Interpreter: "/usr/bin/python3", Script: "drivers/gone/driver.py"}
	_, err := d.Command()
	wd, _ := os.Getwd()
	require.ErrorContains(t, err, "driver gone: no drivers/gone/driver.py in the working directory "+wd)
	require.ErrorContains(t, err, "run deadbolt inside the repository")
}

// A script found above a subdirectory, as from scenarios/ in go test.
func TestTheScriptIsFoundAboveTheWorkingDirectory(t *testing.T) {
	root := t.TempDir()
	script := filepath.Join(root, "drivers", "x", "driver.py")
	require.NoError(t, os.MkdirAll(filepath.Dir(script), 0o755))
	require.NoError(t, os.WriteFile(script, nil, 0o644))
	sub := filepath.Join(root, "a", "b")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	t.Chdir(sub)
	cmd, err := Driver{Name: "x", Interpreter: "/bin/true", Script: "drivers/x/driver.py"}.Command()
	require.NoError(t, err)
	require.Equal(t, []string{script}, cmd.Args)

	_, err = Get("nope")
	require.ErrorContains(t, err, `unknown driver "nope" (shipped: redispy)`)
}
