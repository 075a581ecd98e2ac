package checker

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

// hardKey is a key porcupine cannot settle quickly: many leases whose
// acquires and releases all timed out (each may or may not have taken
// effect, at any later time), before a grant that only some of those
// orders explain. A release follows its acquire's unknown end on the
// client's successor process, as the harness records it.
func hardKey(n int) []history.Op {
	b := newHistory()
	for i := range n {
		// Process p's acquire times out; its successor p+1 releases, and
		// that times out too.
		p, lease := 100+2*i, fmt.Sprintf("x%d", i)
		b.call(history.Op{Time: ms(int64(i)), Process: p, F: history.Acquire, Key: "k", Owner: lease, TTL: ms(1000)}, history.Info, ms(int64(i)),
			func(c *history.Op) { c.Next = p + 1 })
		b.release(history.Invoke, p+1, "k", lease, ms(int64(i)), 0)
	}
	b.acquire(1, "k", "a", ms(50), ms(60), ms(1000), ms(1050)).
		acquire(2, "k", "b", ms(70), ms(80), ms(1000), ms(1070))
	return b.build()
}

// Running out of time is never a pass: the verdict is unknown, and the
// reason says the time limit was hit.
func TestLeaseLockTimeoutIsUnknownNeverValid(t *testing.T) {
	ops := hardKey(16)
	start := time.Now()
	r := Check(ops, Options{Checkers: []string{"lease-lock"}, LinearizabilityTimeout: 50 * time.Millisecond})
	require.Less(t, time.Since(start), 10*time.Second, "the limit is honoured")
	assert.Equal(t, Unknown, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "hit its 50ms time limit")
	ll, _ := r.Check("lease-lock")
	assert.Equal(t, []string{"k"}, ll.Details.(*LeaseLockResult).UnknownKeys)

	// Every key that had no time left is unknown too, whatever it holds.
	r = Check(newHistory().acquire(1, "k", "a", ms(0), ms(10), ms(100), ms(90)).build(),
		Options{Checkers: []string{"lease-lock"}, LinearizabilityTimeout: time.Nanosecond})
	assert.Equal(t, Unknown, r.Verdict, r.Reason)
}
