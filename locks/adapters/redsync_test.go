package adapters_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// onMiniredis builds the redsync adapter over independent masters, each a
// miniredis, or unreachable where servers has nil: redsync's own answers,
// without Docker.
func onMiniredis(t *testing.T, servers ...*miniredis.Miniredis) locks.Lock {
	e := endpoints.Endpoints{Topology: endpoints.Independent, Addresses: map[string]string{}}
	for i, s := range servers {
		m := fmt.Sprintf("redis-%d:6379", i+1)
		e.Masters = append(e.Masters, m)
		e.Addresses[m] = "127.0.0.1:1"
		if s != nil {
			e.Addresses[m] = s.Addr()
		}
	}
	l, err := locks.New("redsync", e, locks.Options{TTL: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { locks.Close(l) })
	return l
}

// A key another holds is a refusal on one master (redsync v4.18.1 says so
// with ErrTaken) and on three; a try that took one master of three and
// gave it back is no refusal; no master reached is no refusal either.
func TestRedsyncAcquireAnswers(t *testing.T) {
	ctx := context.Background()
	a, b, c := miniredis.RunT(t), miniredis.RunT(t), miniredis.RunT(t)
	for _, s := range []*miniredis.Miniredis{a, b, c} {
		s.Set("k", "another's")
	}

	_, err := onMiniredis(t, a).Acquire(ctx, "k")
	require.ErrorIs(t, err, locks.ErrNotAcquired)
	require.True(t, locks.Refused(err), "%v", err)

	_, err = onMiniredis(t, a, b, c).Acquire(ctx, "k")
	require.True(t, locks.Refused(err), "%v", err)

	c.Del("k")
	_, err = onMiniredis(t, a, b, c).Acquire(ctx, "k")
	require.ErrorIs(t, err, locks.ErrUndone)
	require.False(t, locks.Refused(err), "%v", err)
	require.False(t, c.Exists("k"), "redsync gave back the master it took")

	_, err = onMiniredis(t, a, b, nil).Acquire(ctx, "k")
	require.True(t, locks.Failed(err), "a quorum another's, the third unreachable: %v", err)
	require.False(t, locks.Refused(err), "%v", err)

	_, err = onMiniredis(t, nil).Acquire(ctx, "k")
	require.True(t, locks.Failed(err), "%v", err)
	require.False(t, locks.Refused(err), "%v", err)
	require.True(t, locks.NotSent(err), "%v", err)
}

// A release that found the key gone on every master did nothing; one that
// deleted our copy on one master of three did not.
func TestRedsyncReleaseAnswers(t *testing.T) {
	ctx := context.Background()
	a, b, c := miniredis.RunT(t), miniredis.RunT(t), miniredis.RunT(t)
	l := onMiniredis(t, a, b, c)
	lease, err := l.Acquire(ctx, "k")
	require.NoError(t, err)
	b.Del("k")
	c.Del("k")
	err = l.Release(ctx, lease)
	require.Error(t, err)
	require.False(t, locks.Failed(err), "released on one master of three: %v", err)
	require.False(t, a.Exists("k"))

	one := onMiniredis(t, a)
	lease, err = one.Acquire(ctx, "k")
	require.NoError(t, err)
	a.Del("k")
	require.ErrorIs(t, one.Release(ctx, lease), locks.ErrNotHeld)
	require.ErrorIs(t, one.(locks.Extender).Extend(ctx, lease), locks.ErrNotHeld)
}
