package workloads_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

func TestMutexRecordsACheckableHistory(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	rec := history.NewRecorder(nil)
	m := &workloads.Mutex{
		Clients: 4, Keys: []string{"a", "b"}, TTL: 2 * time.Second,
		HoldMin: 5 * time.Millisecond, HoldMax: 30 * time.Millisecond, Pause: 5 * time.Millisecond,
		Seed: 1, Rec: rec,
		Lock: func(locks.Events) (locks.Lock, func(), error) {
			clients := c.Clients(cluster.DefaultClientOptions())
			l, err := locks.New("simple", clients, locks.Options{TTL: 2 * time.Second})
			return l, func() { clients[0].Close() }, err
		},
	}
	stop := make(chan struct{})
	time.AfterFunc(2*time.Second, func() { close(stop) })
	require.NoError(t, m.Run(context.Background(), stop))

	ops := rec.Ops()
	pairs, err := history.Pair(ops)
	require.NoError(t, err)
	for _, p := range pairs {
		require.NotNil(t, p.Complete, "every operation completes when the workload stops: %+v", p.Invoke)
	}
	res := checker.Check(ops, checker.Options{MinAcquires: 20})
	require.Equal(t, checker.Valid, res.Verdict, res.Reason)
	require.Equal(t, res.Stats.AcquiresOK, res.Stats.ReleasesOK, "every lease is released")
	require.LessOrEqual(t, res.Stats.Processes, 4)
}

func TestMutexRejectsAnEmptyShape(t *testing.T) {
	m := &workloads.Mutex{Clients: 0, Keys: []string{"a"}}
	require.Error(t, m.Run(context.Background(), nil))
	m = &workloads.Mutex{Clients: 1}
	require.Error(t, m.Run(context.Background(), nil))
}

func TestOpeningALockCanFail(t *testing.T) {
	m := &workloads.Mutex{Clients: 1, Keys: []string{"a"}, Rec: history.NewRecorder(nil),
		Lock: func(locks.Events) (locks.Lock, func(), error) { return nil, nil, errors.New("no such lock") }}
	require.ErrorContains(t, m.Run(context.Background(), nil), "no such lock")
}
