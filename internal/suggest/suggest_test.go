package suggest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClosest(t *testing.T) {
	known := []string{"failover-simple", "failover-redlock", "pause-simple", "simple", "redlock", "kill", "restart"}
	for _, tc := range []struct {
		name, want string
	}{
		{"failover-simpel", "failover-simple"},
		{"simpel", "simple"},
		{"redlok", "redlock"},
		{"kil", "kill"},
		{"restrat", "restart"},
		// A third of a long name: 5 edits in 15 runes, not 6.
		{"failover-sXXXXX", "failover-simple"},
		{"failover-XXXXXX", ""},
		{"pause-simpel", "pause-simple"},
		{"meteor", ""},
		{"nope", ""},
		{"x", ""},  // one rune is no misspelling
		{"ki", ""}, // two edits from "kill", as many as it has runes
		{"simple", ""},
	} {
		got, ok := Closest(tc.name, known)
		require.Equal(t, tc.want, got, "%q", tc.name)
		require.Equal(t, tc.want != "", ok, "%q", tc.name)
	}
}

// A long name may be further off: a third of its length.
func TestClosestAllowsAThirdOfALongName(t *testing.T) {
	known := []string{"pause-in-release-get-then-del"}
	got, ok := Closest("pause-in-relaese-get-then-dle", known) // 4 edits in 29 runes
	require.True(t, ok)
	require.Equal(t, known[0], got)
	got, ok = Closest("pause-XX-XXXXXXX-get-then-del", known) // 9 edits, 29/3
	require.True(t, ok)
	require.Equal(t, known[0], got)
	_, ok = Closest("pause-XX-XXXXXXX-Xet-then-del", known) // 10 edits
	require.False(t, ok)
}

func TestClosestPrefersTheNearestThenTheFirst(t *testing.T) {
	got, _ := Closest("fair", []string{"fail", "fir", "fairy"})
	require.Equal(t, "fail", got) // all one edit: the first listed
	got, _ = Closest("fair", []string{"fir", "fail", "fairy"})
	require.Equal(t, "fir", got)
	got, _ = Closest("redlocks", []string{"redsync", "redlock"})
	require.Equal(t, "redlock", got)
}

func TestHint(t *testing.T) {
	require.Equal(t, `; did you mean "simple"?`, Hint("simpel", []string{"redlock", "simple"}))
	require.Equal(t, "", Hint("meteor", []string{"redlock", "simple"}))
	require.Equal(t, "", Hint("simpel", nil))
}
