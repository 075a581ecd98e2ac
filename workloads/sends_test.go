package workloads

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

// A client's latency for an operation is the median of its last ones;
// while it has fewer than 3, every client's of that operation.
func TestLatencyIsTheMedianOfTheClientsRecentOnes(t *testing.T) {
	r := &Runner{latencies: latencies{}}
	r.mu.Lock()
	require.Zero(t, r.latencyLocked(0, history.Release), "none known yet")
	r.mu.Unlock()
	r.noteLatency(1, history.Release, 3*time.Millisecond)
	r.noteLatency(1, history.Release, time.Millisecond)
	r.noteLatency(1, history.Acquire, 9*time.Millisecond)
	r.mu.Lock()
	require.Equal(t, 3*time.Millisecond, r.latencyLocked(0, history.Release), "client 0 has none: every client's releases")
	r.mu.Unlock()
	for _, d := range []time.Duration{5, 1, 2, 4} {
		r.noteLatency(0, history.Release, d*time.Millisecond)
	}
	r.mu.Lock()
	require.Equal(t, 4*time.Millisecond, r.latencyLocked(0, history.Release), "its own four: the upper median")
	r.mu.Unlock()
	for range 2 * keptLatencies {
		r.noteLatency(0, history.Release, 7*time.Millisecond)
	}
	r.mu.Lock()
	require.Equal(t, 7*time.Millisecond, r.latencyLocked(0, history.Release), "only the last ones count")
	require.Len(t, r.latencies[latencyKey{0, history.Release}], keptLatencies)
	r.mu.Unlock()
}

// A key is quiet for a client while no other session holds it or asks
// for it.
func TestAKeyIsQuietWhileNobodyElseHoldsItOrAsks(t *testing.T) {
	a := &Session{slot: 0, leases: map[string]*Lease{}}
	b := &Session{slot: 1, leases: map[string]*Lease{}}
	slots := []*Session{a, b}
	require.True(t, quiet(slots, a, "k"))
	b.leases["p1.1"] = &Lease{ID: "p1.1", Key: "k"}
	require.False(t, quiet(slots, a, "k"), "b holds k")
	require.True(t, quiet(slots, a, "other"))
	require.True(t, quiet(slots, b, "k"), "its own lease does not count")
	delete(b.leases, "p1.1")
	b.inflight = &history.Op{F: history.Acquire, Key: "k"}
	require.False(t, quiet(slots, a, "k"), "b asks for k")
	b.leases["p1.2"] = &Lease{ID: "p1.2", Key: "k"}
	b.inflight = &history.Op{F: history.Release, Key: "k", Lease: "p1.2"}
	require.False(t, quiet(slots, a, "k"), "b holds k until its release answers")
}
