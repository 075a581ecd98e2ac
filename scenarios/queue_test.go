package scenarios

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/history"
)

// A scenario that judges a queue's order counts only when some acquire
// stood in the line: one where none did is unknown (run.go), not valid.
func TestAQueueIsJudgedOnlyWhenSomeAcquireStoodInLine(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	grant := func(queued int64) []history.Op {
		inv := history.Op{Index: 0, Time: ms(0), Type: history.Invoke, Process: 0, F: history.Acquire, Key: "k", Lease: "p0.1", TTL: ms(1000)}
		ok := inv
		ok.Index, ok.Time, ok.Type, ok.Owner, ok.Queued = 1, ms(10), history.OK, "a", queued
		rel := history.Op{Index: 2, Time: ms(20), Type: history.Invoke, Process: 0, F: history.Release, Key: "k", Lease: "p0.1", Owner: "a"}
		relOK := rel
		relOK.Index, relOK.Time, relOK.Type = 3, ms(30), history.OK
		return []history.Op{inv, ok, rel, relOK}
	}
	opts := checker.Options{Checkers: []string{"fairness"}}
	require.False(t, stoodInLine(checker.Check(grant(0), opts)), "nobody stood in line")
	require.True(t, stoodInLine(checker.Check(grant(ms(5)), opts)), "the acquire stood in line at 5ms")
	require.False(t, stoodInLine(checker.Check(grant(ms(5)), checker.Options{Checkers: []string{"double-holds"}})), "no fairness check, no queue judged")
}
