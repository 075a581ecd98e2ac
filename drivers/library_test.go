package drivers_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/drivers"
)

// The oldest and the newest version each library lists as known to build
// build (or are set up) here, and their drivers' hellos name the very
// version asked for, with the library's module or package.
func TestKnownVersionsBuildAndSayTheirVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds drivers through the module proxy (and Debian's archive)")
	}
	for _, n := range drivers.LibraryNames() {
		l, err := drivers.GetLibrary(n)
		require.NoError(t, err)
		require.NotEmpty(t, l.Known, n)
		for _, v := range []string{l.Known[0], l.Known[len(l.Known)-1]} {
			lock := n + "@" + v
			t.Run(lock, func(t *testing.T) {
				cmd, err := drivers.Build(context.Background(), lock, t.Logf)
				require.NoError(t, err)
				hello, err := client.Probe(cmd)
				require.NoError(t, err)
				require.Equal(t, []string{lock}, hello.Names(), "the driver runs the version asked for")
				require.Equal(t, v, hello.Info[lock].Version)
				require.NotEmpty(t, hello.Info[lock].Library)
			})
		}
	}
}

// A version that does not exist, and names that are no library at a
// version, are refused with the reason: the proxy's own words, or what a
// version must look like.
func TestBadVersionsAreRefusedWithTheReason(t *testing.T) {
	for lock, want := range map[string]string{
		"nosuch@v1.0.0":   `unknown library "nosuch"`,
		"redsync@banana":  "a semantic version",
		"redsync@v2.0.0":  "no adapter for redsync's v2",
		"redispy@9.9.9":   "deadbolt runs the redis-py of Debian's packages",
		"redsync":         "NAME@VERSION",
		"redsync@v4.0.99": "not available",
	} {
		t.Run(lock, func(t *testing.T) {
			if testing.Short() && lock == "redsync@v4.0.99" {
				t.Skip("asks the module proxy")
			}
			_, err := drivers.Build(context.Background(), lock, nil)
			require.ErrorContains(t, err, want)
		})
	}
}
