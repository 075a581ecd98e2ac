package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// The lean client is a whole client: built alone, its hello offers every
// lock deadbolt has, as `deadbolt client` does; arguments are bad input.
func TestTheLeanClientOffersEveryLock(t *testing.T) {
	bin := filepath.Join(t.TempDir(), client.OwnName)
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))

	h, err := client.Probe(client.Command{Path: bin})
	require.NoError(t, err)
	require.Equal(t, locks.Names(), h.Names())

	out, err = exec.Command(bin, "--help").CombinedOutput()
	require.NoError(t, err)
	require.Contains(t, string(out), "usage of deadbolt-client")

	out, err = exec.Command(bin, "extra").CombinedOutput()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "%v", err)
	require.Equal(t, 254, exit.ExitCode())
	require.Contains(t, string(out), "takes no arguments")
}
