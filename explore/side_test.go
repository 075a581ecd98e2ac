package explore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// A side is a lock and its knobs: two settings of one library are two
// sides, each named by its label, read back the same, and run as such.
func TestSidesAreALockAndItsKnobs(t *testing.T) {
	require.Equal(t, "redsync@v4.18.1", Label("redsync@v4.18.1", nil))
	l := Label("redsync@v4.18.1", map[string]string{"tries": "1", "max_retries": "-1"})
	require.Equal(t, "redsync@v4.18.1 {max_retries=-1 tries=1}", l)
	lock, knobs := sideOf(l)
	require.Equal(t, "redsync@v4.18.1", lock)
	require.Equal(t, map[string]string{"tries": "1", "max_retries": "-1"}, knobs)
	s := on(scenarios.Scenario{Lock: "x"}, l)
	require.Equal(t, "redsync@v4.18.1", s.Lock)
	require.Equal(t, knobs, s.LockOptions.Library)
	require.Equal(t, "redsync-v4.18.1-max_retries--1-tries-1", FileSafe(l))

	o := Options{Lock: "redsync@v4.18.1", Against: "redsync@v4.18.1", Runs: 1, Parallel: 1}
	require.ErrorContains(t, o.Check(), "with the same options")
	o.AgainstKnobs = map[string]string{"max_retries": "-1"}
	require.NoError(t, o.Check(), "one library, two settings: two locks to tell apart")
	o.Against = ""
	require.ErrorContains(t, o.Check(), "--against-option sets the knobs of --against's lock")
}
