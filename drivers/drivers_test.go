package drivers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	deadbolt "github.com/deadbolt-lab/deadbolt"
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
	require.ErrorContains(t, err, "driver gone: no drivers/gone/driver.py in or above "+wd+" or ")
	require.ErrorContains(t, err, "nor in the source this binary carries")
}

// Outside any checkout, the shipped files come from the source the binary
// carries, unpacked into the cache: the Python driver, and every Go
// library's adapter, as they are in the repository.
func TestOutsideACheckoutTheShippedFilesAreTheCarriedSource(t *testing.T) {
	repo, err := filepath.Abs("..")
	require.NoError(t, err)
	t.Setenv(CacheEnv, t.TempDir())
	t.Chdir(t.TempDir())
	d, err := Get("redispy")
	require.NoError(t, err)
	cmd, err := d.Command()
	require.NoError(t, err)
	require.False(t, strings.HasPrefix(cmd.Args[0], repo), "%s: not the checkout's", cmd.Args[0])
	root, err := unpack(deadbolt.Source)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(root, os.Getenv(CacheEnv)), root)
	again, err := unpack(deadbolt.Source)
	require.NoError(t, err)
	require.Equal(t, root, again, "one content, one directory")
	same := func(rel string) {
		want, err := os.ReadFile(filepath.Join(repo, rel))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(t, err, rel)
		require.Equal(t, string(want), string(got), rel)
	}
	same("go.mod")
	same("drivers/redispy/driver.py")
	for _, n := range LibraryNames() {
		for _, m := range libraries[n].Go {
			same(filepath.Join(m.Adapter, adapterMod))
			same(filepath.Join(m.Adapter, "main.go"))
		}
	}
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
