package nemesis_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/nemesis/nemesistest"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// strikesOf judges the strikes of a history.
func strikesOf(t *testing.T, ops []history.Op) []checker.Strike {
	t.Helper()
	in, err := checker.NewInput(ops)
	require.NoError(t, err)
	return checker.Strikes(in)
}

// invoked is the invocation of lease's f in ops.
func invoked(t *testing.T, ops []history.Op, lease string, f history.F) history.Op {
	t.Helper()
	for _, op := range ops {
		if op.Lease == lease && op.F == f && op.Type == history.Invoke && op.Process >= 0 {
			return op
		}
	}
	t.Fatalf("no %s of %s in the history", f, lease)
	return history.Op{}
}

// pause-in-release on a correct lock: every strike is a real SIGSTOP a
// delay after a release was written, each on a fresh release, each a
// window of its own healed after twice the TTL; the lock never lets a late
// release take effect, so the series runs to its bound.
func TestPauseInReleaseStrikesFreshReleasesUpToItsBound(t *testing.T) {
	spec := nemesistest.Options{Topology: cluster.Independent, Masters: 1}
	ops, ws := faultRun(t, spec, "mutex", "simple", "pause-in-release", nemesis.Params{Key: "k", Strikes: 3}, 20*time.Second,
		func(r *workloads.Runner, victim int) {
			require.Equal(t, "T", r.Process(victim).State(), "a pause is a real SIGSTOP")
		})
	require.Len(t, ws, 3)
	ss := strikesOf(t, ops)
	require.Len(t, ss, 3)
	leases := map[string]bool{}
	for i, s := range ss {
		require.Equal(t, history.Release, s.Op)
		require.False(t, s.Kill)
		require.True(t, s.Complete, "the heal said how the strike landed")
		require.True(t, ws[i].Healed)
		require.GreaterOrEqual(t, time.Duration(ws[i].End-ws[i].Start), time.Second, "twice the 500ms TTL")
		rel := invoked(t, ops, s.Lease, history.Release)
		require.LessOrEqual(t, rel.Time, ws[i].Start, "timed from the release's write")
		require.Contains(t, ws[i].Node, "in its release of "+s.Lease)
		// Its reply may be ok all the same, when the script ran before the
		// stop: the key was then free while the client slept.
		require.False(t, s.Late, "simple's release never takes effect after its lease expired")
		leases[s.Lease] = true
	}
	require.Len(t, leases, 3, "each strike on a fresh release")
}

// crash-in-acquire on client 0 and key k: each strike kills client 0 a
// delay after it wrote an acquire of k that it sent while nobody else held
// k or asked for it (the others wait at the gate meanwhile).
func TestCrashInAcquireKillsClientZeroOnAFreeKey(t *testing.T) {
	spec := nemesistest.Options{Topology: cluster.Independent, Masters: 1}
	step := nemesis.Step{Fault: "crash-in-acquire", Target: "client:0", Key: "k", Strikes: 2}
	ops, ws := faultRun(t, spec, "mutex", "simple", "plan", nemesis.Params{Steps: []nemesis.Step{step}}, 20*time.Second, nil)
	require.Len(t, ws, 2)
	in, err := checker.NewInput(ops)
	require.NoError(t, err)
	ss := checker.Strikes(in)
	require.Len(t, ss, 2)
	for i, s := range ss {
		require.True(t, s.Kill)
		require.Equal(t, history.Acquire, s.Op)
		require.Less(t, time.Duration(ws[i].End-ws[i].Start), time.Second, "a crash has nothing to heal")
		acq := invoked(t, ops, s.Lease, history.Acquire)
		require.LessOrEqual(t, acq.Time, ws[i].Start)
		for _, h := range in.Holds["k"] {
			require.False(t, h.Lease != s.Lease && h.AcquiredAt <= acq.Time && acq.Time < h.Until,
				"lease %s held k when the struck acquire %s was sent", h.Lease, s.Lease)
		}
		require.False(t, s.Stuck, "simple's key expires")
	}
	require.NotEqual(t, ss[0].Process, ss[1].Process, "the killed client came back as a new process")
}

func TestFaultsInsideOperationsAreChecked(t *testing.T) {
	_, err := nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{{Fault: "pause-in-release", Target: "primary"}}})
	require.ErrorContains(t, err, "needs a client target")
	_, err = nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{{Fault: "crash-in-acquire", Key: "k", Point: "after-setnx"}}})
	require.ErrorContains(t, err, "takes no point")
	_, err = nemesis.New("pause-in-release", nemesis.Params{Strikes: -1})
	require.ErrorContains(t, err, "must not be negative")
	n, err := nemesis.New("pause-in-release", nemesis.Params{Key: "k", Strikes: 5})
	require.NoError(t, err)
	// Five strikes of a pause of twice the TTL, each waiting up to a TTL
	// for its release; a kill waits a TTL for its request and one after it.
	require.Equal(t, 5*3*time.Second, n.Span(time.Second))
	n, err = nemesis.New("crash-in-acquire", nemesis.Params{Key: "k", Strikes: 5})
	require.NoError(t, err)
	require.Equal(t, 5*2*time.Second, n.Span(time.Second))
}
