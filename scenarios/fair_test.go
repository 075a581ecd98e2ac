package scenarios_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// The fair lock's line, judged through real client processes: the lock
// that hands a free lock to whoever asks is caught passing waiters, and
// the fair lock under the same load is not, with pairs actually judged.
func TestBargingFairLockIsCaughtPassingTheLine(t *testing.T) {
	clustertest.RequireDocker(t)
	run := func(name string) (verdict string, pairs, jumps int64) {
		s, err := scenarios.Get(name)
		require.NoError(t, err)
		s.Time = scenarios.Duration(5 * time.Second)
		res, err := s.Run(context.Background(), scenarios.RunOptions{Seed: 1, Store: t.TempDir(), Driver: clienttest.Command()})
		require.NoError(t, err)
		return res.CheckVerdict("fairness"), res.Metric("judged_pairs"), res.Metric("queue_jumps")
	}
	verdict, _, jumps := run("fair-queue-barging")
	require.Equal(t, "invalid", verdict)
	require.Positive(t, jumps)

	verdict, pairs, jumps := run("fair-queue")
	require.Equal(t, "valid", verdict)
	require.Positive(t, pairs, "the fair lock's line was never put to the test")
	require.Zero(t, jumps)
}
