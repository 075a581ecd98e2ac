package client_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client"
)

func TestIsOwnKnowsTheLeanClientAndTheOldCommand(t *testing.T) {
	for _, own := range [][]string{{"deadbolt-client"}, {"/x/bin/deadbolt-client"}, {"/x/bin/deadbolt", "client"}, {"deadbolt", "client"}} {
		require.True(t, client.IsOwn(own), "%v", own)
	}
	for _, other := range [][]string{nil, {"python3", "drivers/redispy/driver.py"}, {"/x/bin/deadbolt"}, {"/x/deadbolt-client-old"},
		{"/x/bin/deadbolt-client", "--help"}, {"deadbolt", "client", "x"}} {
		require.False(t, client.IsOwn(other), "%v", other)
	}
}

// The client binary is found beside deadbolt or where DEADBOLT_CLIENT
// says; missing, it is an error that says how to build it.
func TestOwnFindsTheClientOrSaysHowToBuildIt(t *testing.T) {
	t.Setenv(client.OwnEnv, "")
	_, err := client.Own() // the test binary has no deadbolt-client beside it
	require.ErrorContains(t, err, "deadbolt's own client deadbolt-client is not beside")
	require.ErrorContains(t, err, "make build")
	require.ErrorContains(t, err, "go build -o ")

	dir := t.TempDir()
	bin := filepath.Join(dir, "deadbolt-client")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	t.Setenv(client.OwnEnv, bin)
	cmd, err := client.Own()
	require.NoError(t, err)
	require.Equal(t, client.Command{Path: bin}, cmd)

	require.NoError(t, os.Chmod(bin, 0o644))
	_, err = client.Own()
	require.ErrorContains(t, err, "not an executable file")
	t.Setenv(client.OwnEnv, filepath.Join(dir, "missing"))
	_, err = client.Own()
	require.ErrorContains(t, err, "no such file")
}
