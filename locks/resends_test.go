package locks_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// resending is the simple lock declaring that its client resends a
// timed-out command, as a library over go-redis's defaults does.
type resending struct{ locks.Lock }

func (resending) ResendsTimedOut() bool { return true }

func TestResendsIsWhatTheLockInstanceSays(t *testing.T) {
	locks.Register("test-resending", "TEST: the simple lock, declaring that its client resends timed-out commands",
		func(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
			l, err := locks.New("simple", e, o)
			return resending{l}, err
		})
	require.True(t, locks.Resends("test-resending"))
	require.True(t, locks.Declare("test-resending").Resends, "the Go driver's hello says it")
	require.True(t, locks.Registry.Resends("test-resending"))
	// deadbolt's own locks run go-redis with MaxRetries -1.
	for _, n := range []string{"simple", "redlock", "reentrant"} {
		require.False(t, locks.Resends(n), n)
	}
	d := locks.Declared{Driver: "d", Locks: []string{"mine"}, Info: map[string]locks.Declaration{"mine": {Behaviour: locks.Behaviour{Resends: true}}}}
	require.True(t, d.Resends("mine"))
	require.False(t, locks.Declared{Driver: "bare", Locks: []string{"mine"}}.Resends("mine"), "nothing declared: no resends")
}
