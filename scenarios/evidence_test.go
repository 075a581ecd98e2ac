package scenarios

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

// A run short of grants runs on until it has them: the run-on ends at the
// grant that made the minimum, not at its bound.
func TestARunShortOfGrantsRunsOnUntilItHasThem(t *testing.T) {
	rec := history.NewRecorder(io.Discard)
	acquire := func(typ history.Type) {
		rec.Record(history.Op{Type: history.Invoke, Process: 1, F: history.Acquire, Key: "k0"})
		rec.Record(history.Op{Type: typ, Process: 1, F: history.Acquire, Key: "k0"})
	}
	acquire(history.OK)
	acquire(history.Fail)
	done := make(chan time.Duration)
	go func() { done <- runOnFor(rec, 3, time.Hour, nil) }()
	acquire(history.OK)
	select {
	case <-done:
		t.Fatal("ran on only until its second grant")
	default:
	}
	acquire(history.Info)
	acquire(history.OK)
	<-done // the third grant ends it; an hour's bound would time the test out

	// Enough already: no run-on at all.
	require.Less(t, runOnFor(rec, 3, time.Hour, nil), time.Minute)
	// Never enough: the bound ends it.
	require.GreaterOrEqual(t, runOnFor(rec, 100, 200*time.Millisecond, nil), 200*time.Millisecond)
	// The run ending ends it too.
	quit := make(chan struct{})
	close(quit)
	require.Less(t, runOnFor(rec, 100, time.Hour, quit), time.Minute)
}
