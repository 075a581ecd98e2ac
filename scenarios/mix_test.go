package scenarios_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/scenarios"
)

func TestParseLockMix(t *testing.T) {
	m, err := scenarios.ParseLockMix("redsync@v4.0.3:2")
	require.NoError(t, err)
	require.Equal(t, scenarios.LockMix{Lock: "redsync@v4.0.3", Clients: 2}, m)
	require.Equal(t, "redsync@v4.0.3:2", m.String())
	for _, bad := range []string{"simple", ":1", "simple:0", "simple:x", "simple:-1"} {
		_, err := scenarios.ParseLockMix(bad)
		require.Error(t, err, bad)
	}
}

// A mix is judged before anything starts, as the scenario's own lock is;
// a fleet nobody has judged expects nothing.
func TestPrepareJudgesTheMix(t *testing.T) {
	s, err := scenarios.Get("pause-simple")
	require.NoError(t, err)
	p, err := s.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetMix([]scenarios.LockMix{{Lock: "bsm", Clients: 1}})}})
	require.NoError(t, err)
	require.Equal(t, scenarios.Unknown, p.Expect, "another fleet is another experiment")
	require.Equal(t, []scenarios.LockMix{{Lock: "bsm", Clients: 1}}, p.Mix)

	for _, tc := range []struct {
		mix      scenarios.LockMix
		workload string
		want     string
	}{
		{scenarios.LockMix{Lock: "bsm", Clients: s.Clients}, "", "needs at least one of its own"},
		{scenarios.LockMix{Lock: "no-ttl", Clients: 1}, "heartbeat", "mixed lock no-ttl: workload heartbeat calls extend on a held lease"},
		{scenarios.LockMix{Lock: "reentrant", Clients: 1}, "", "differ in re-entry"},
		{scenarios.LockMix{Lock: "nosuch", Clients: 1}, "", `mixed lock nosuch: unknown lock "nosuch"`},
	} {
		_, err := s.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetWorkload(tc.workload), scenarios.SetMix([]scenarios.LockMix{tc.mix})}})
		require.ErrorContains(t, err, tc.want, tc.mix.String())
	}
}

// One client is one client, not "1 clients".
func TestAMixOfTheOnlyClientSaysOneClient(t *testing.T) {
	s, err := scenarios.Get("pause-simple")
	require.NoError(t, err)
	_, err = s.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetClients(1), scenarios.SetMix([]scenarios.LockMix{{Lock: "bsm", Clients: 1}})}})
	require.ErrorContains(t, err, "take 1 of its 1 client; simple needs at least one of its own")
}
