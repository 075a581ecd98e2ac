package drivers_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/drivers"
	"github.com/deadbolt-lab/deadbolt/locks"
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
				declaresWhatItDoes(t, cmd, lock, hello.Info[lock])
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

// declaresWhatItDoes checks a library's declaration: its client, read off
// the client it built; its knobs, each a setting the library has, whose
// change the declaration follows (a timeout, a library's retries).
func declaresWhatItDoes(t *testing.T, cmd client.Command, lock string, d locks.Declaration) {
	t.Helper()
	require.NotEmpty(t, d.Client, "%s says which client sends its commands", lock)
	require.NotZero(t, d.CallTimeoutMS, "%s says how long its client waits for a reply", lock)
	if len(d.Options) == 0 {
		require.True(t, strings.HasPrefix(lock, "gozero@"), "%s declares no knobs: only go-zero, whose client takes none, may not", lock)
		return
	}
	require.NoError(t, d.Options.Check())
	// The first duration knob that a scenario's timeout_ms sets: a call
	// timeout every library has.
	i := slices.IndexFunc(d.Options, func(k locks.Knob) bool { return k.From == locks.FromTimeout })
	require.GreaterOrEqual(t, i, 0, "%s has a knob for its call timeout", lock)
	k := d.Options[i]
	set, err := client.ProbeLock(cmd, &client.Configured{Lock: lock, TTLMS: 1000, Options: client.LockOptions{Library: map[string]string{k.Name: "321ms"}}})
	require.NoError(t, err)
	got := set.Info[lock]
	require.Contains(t, got.Settings, k.Name+"=321ms")
	if k.Name != "dial_timeout" && k.Name != "connect_timeout" && k.Name != "socket_connect_timeout" && k.Name != "try_next_after" {
		require.EqualValues(t, 321, got.CallTimeoutMS, "%s: %s is the wait for a reply", lock, k.Name)
	}
	_, err = client.ProbeLock(cmd, &client.Configured{Lock: lock, TTLMS: 1000, Options: client.LockOptions{Library: map[string]string{"nosuch": "1"}}})
	require.ErrorContains(t, err, `unknown lock option "nosuch" (known: `+d.Options[0].Name)
}
