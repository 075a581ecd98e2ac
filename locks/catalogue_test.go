package locks_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/locks"
	_ "github.com/deadbolt-lab/deadbolt/locks/all"
)

// The Go driver's hello declares what the registry knows, and a driver's
// declarations answer as the registry would: a one-master lock refuses
// five groups, RedLock takes any number, points and re-entry are kept.
func TestDeclarationsAnswerAsTheRegistry(t *testing.T) {
	var names []string
	info := map[string]locks.Declaration{}
	for _, n := range locks.Names() {
		names = append(names, n)
		info[n] = locks.Declare(n)
	}
	require.Equal(t, locks.Declaration{Summary: locks.Summary("simple"), MinGroups: 1, MaxGroups: 1,
		Topologies: []string{"sentinel", "independent", "cluster"}, TLS: true, Calls: []string{locks.CallExtend},
		Behaviour: locks.Behaviour{CallTimeoutMS: 500}}, info["simple"], "deadbolt's own lock waits its call timeout, 500 ms by default, and never resends")
	require.Equal(t, []string{locks.CallExtend}, info["redsync"].Calls, "redsync's Extend")
	require.Empty(t, info["fair"].Calls, "a fair lock offers no call on a held lease")
	require.Equal(t, []string{"sentinel", "independent"}, info["redlock"].Topologies, "RedLock refuses one cluster's masters")
	require.ErrorContains(t, locks.RunsOn("redlock", "cluster"), "on one Redis Cluster a key lives only on its slot's master")
	require.Equal(t, []string{"sentinel", "cluster"}, info["simple-wait"].Topologies, "WAIT needs a replica: independent masters have none")
	require.ErrorContains(t, locks.RunsOn("simple-wait", "independent"), "grants only once 1 replica(s) acknowledge")
	require.Equal(t, 1, info["redlock"].MinGroups)
	require.Zero(t, info["redlock"].MaxGroups, "no bound")
	require.True(t, info["reentrant"].Reentrant)
	require.True(t, info["fenced"].Fencing, "fenced hands out tokens")
	require.False(t, info["simple"].Fencing)
	require.True(t, info["fair"].Queues, "the fair lock keeps its waiters in line")
	require.False(t, info["reentrant"].Queues, "re-entry is no queue")
	require.False(t, info["simple"].Queues)
	require.Equal(t, locks.Points("get-then-del"), info["get-then-del"].Points)

	d := locks.Declared{Driver: "some-driver", Locks: names, Info: info}
	for _, n := range names {
		for _, groups := range []int{1, 3, 5} {
			require.Equal(t, locks.Fits(n, groups) == nil, d.Fits(n, groups) == nil, "%s over %d groups", n, groups)
		}
		for _, topology := range []string{"sentinel", "independent", "cluster"} {
			require.Equal(t, locks.RunsOn(n, topology) == nil, d.RunsOn(n, topology) == nil, "%s on %s", n, topology)
		}
		require.Equal(t, locks.Reentrant(n), d.Reentrant(n), n)
		require.Equal(t, locks.Fencing(n), d.Fencing(n), n)
		require.Equal(t, locks.Queues(n), d.Queues(n), n)
		require.Equal(t, locks.Resends(n), d.Resends(n), n)
		require.Equal(t, locks.HasPoint(n, "after-get") == nil, d.HasPoint(n, "after-get") == nil, n)
		for _, call := range []string{locks.CallExtend, locks.CallReacquire} {
			require.Equal(t, locks.Registry.Offers(n, call) == nil, d.Offers(n, call) == nil, "%s %s", n, call)
		}
		require.NoError(t, d.TLS(n), "every Go lock dials through the endpoints' Dialer, TLS included")
	}
	require.ErrorContains(t, d.Lookup("nope"), `unknown lock "nope": driver some-driver offers bsm, `)
	require.ErrorContains(t, d.Lookup("redlok"), `; did you mean "redlock"?`)
	require.ErrorContains(t, locks.Lookup("redlok"), `; did you mean "redlock"?`)

	// A driver that declares nothing about a lock is taken at its word
	// that it has the lock, and no points.
	bare := locks.Declared{Driver: "bare", Locks: []string{"mine"}}
	require.NoError(t, bare.Fits("mine", 5))
	require.NoError(t, bare.RunsOn("mine", "sentinel"))
	require.ErrorContains(t, bare.RunsOn("mine", "cluster"), "lock mine of driver bare runs on the sentinel and independent topologies (its lock_info's topologies), not on cluster")
	require.ErrorContains(t, bare.HasPoint("mine", "after-get"), `lock mine of driver bare has no point "after-get" (its points: none)`)
	require.False(t, bare.Reentrant("mine"))
	require.ErrorContains(t, bare.TLS("mine"), "lock mine of driver bare does not declare TLS")
}
