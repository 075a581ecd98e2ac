package checker

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/history/historytest"
)

// hardKey is a key porcupine cannot settle quickly: many leases whose
// acquires and releases all timed out (each may or may not have taken
// effect, at any later time), before a grant that only some of those
// orders explain. A release follows its acquire's unknown end on the
// client's successor process, as the harness records it. The search
// grows about thirty times with each lease: 3 take 12 thousand steps,
// 4 take 371 thousand, 5 take 14 million.
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

// Spending the budget is never a pass: the verdict is unknown, and the
// reason names the budget.
func TestLeaseLockBudgetSpentIsUnknownNeverValid(t *testing.T) {
	r := Check(hardKey(16), Options{Checkers: []string{"lease-lock"}, ModelSteps: 1000})
	assert.Equal(t, Unknown, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "the lease-lock model check spent its budget of 1000 steps on 1 key of 1 before deciding them")
	ll, _ := r.Check("lease-lock")
	d := ll.Details.(*LeaseLockResult)
	assert.Equal(t, []string{"k"}, d.UnknownKeys)
	assert.Empty(t, d.FailedKeys, "a search cut short proves nothing illegal")
	assert.LessOrEqual(t, d.MostSteps, int64(1000))
}

// A key that needs many steps is unknown with a small budget and decided
// with the default, well inside it.
func TestLeaseLockDefaultBudgetDecidesAHardKey(t *testing.T) {
	ops := hardKey(4)
	small, err := LeaseLock(ops, 10_000)
	require.NoError(t, err)
	assert.Equal(t, Unknown, small.Verdict)
	assert.Equal(t, []string{"k"}, small.UnknownKeys)

	r := Check(ops, Options{Checkers: []string{"lease-lock"}})
	assert.Equal(t, Invalid, r.Verdict, r.Reason)
	ll, _ := r.Check("lease-lock")
	d := ll.Details.(*LeaseLockResult)
	assert.Greater(t, d.MostSteps, int64(100_000), "a search of many steps")
	assert.Less(t, d.MostSteps, int64(DefaultModelSteps/4), "well inside the default")
}

// burn keeps every CPU busy until the returned function is called.
func burn() (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := uint64(1)
			for !done.Load() {
				for range 1000 {
					x = x*6364136223846793005 + 1442695040888963407
				}
			}
			_ = x
		}()
	}
	return func() { done.Store(true); wg.Wait() }
}

// steps is what a check of ops came to: the verdict and the steps.
type steps struct {
	verdict     Verdict
	all, most   int64
	failed, unk []string
}

func stepsOf(t *testing.T, ops []history.Op, budget int64) steps {
	t.Helper()
	r, err := LeaseLock(ops, budget)
	require.NoError(t, err)
	return steps{r.Verdict, r.Steps, r.MostSteps, r.FailedKeys, r.UnknownKeys}
}

// The verdict and the steps are the history's: the same on a second
// check, on one made while every CPU is busy with GOMAXPROCS 1, and the
// budget is exact: a budget of the most steps one search took changes
// nothing, one step fewer cuts that search short. A budget read from the
// clock, or a count shared by keys searched at once, fails this.
func TestLeaseLockStepsAreTheHistorys(t *testing.T) {
	// hardKey(3) is one search of one illegal key; long is three legal
	// keys of 2000 operations, searched in pieces at once; both is two
	// illegal keys searched at once.
	two := historytest.Generate(historytest.Config{Seed: 1, Keys: 2, Clients: 4, Ops: 4000, DoubleHolds: 2})
	for name, ops := range map[string][]history.Op{"hard": hardKey(3), "long": bigHistory(3000), "two": two.Ops} {
		first := stepsOf(t, ops, DefaultModelSteps)
		require.Positive(t, first.most, name)
		require.Empty(t, first.unk, name)
		assert.Equal(t, first, stepsOf(t, ops, DefaultModelSteps), "%s: a second check", name)

		stop := burn()
		procs := runtime.GOMAXPROCS(1)
		loaded := stepsOf(t, ops, DefaultModelSteps)
		exact := stepsOf(t, ops, first.most)
		short := stepsOf(t, ops, first.most-1)
		runtime.GOMAXPROCS(procs)
		stop()

		assert.Equal(t, first, loaded, "%s: a check beside busy CPUs", name)
		assert.Equal(t, first, exact, "%s: a budget of exactly the most steps changes nothing", name)
		assert.NotEqual(t, first, short, "%s: one step fewer cuts a search short", name)
		if name != "long" {
			assert.Len(t, first.failed, map[string]int{"hard": 1, "two": 2}[name], "%s: the keys found illegal", name)
		}
	}
	// One search is the whole of hard: one step fewer leaves it unknown.
	assert.Equal(t, steps{Unknown, 12474, 12474, nil, []string{"k"}}, stepsOf(t, hardKey(3), 12474))
}

// Checked from a file key by key, the steps are the same each time too.
func TestCheckReaderStepsAreTheHistorys(t *testing.T) {
	h := historytest.Generate(historytest.Config{Seed: 4, Keys: 4, Clients: 8, Ops: 20000, DoubleHolds: 1})
	var buf bytes.Buffer
	require.NoError(t, historytest.WriteJSONL(&buf, h.Ops))
	check := func() steps {
		r, err := CheckReader(bytes.NewReader(buf.Bytes()), Options{})
		require.NoError(t, err)
		ll, _ := r.Check("lease-lock")
		d := ll.Details.(*LeaseLockResult)
		return steps{r.Verdict, d.Steps, d.MostSteps, d.FailedKeys, d.UnknownKeys}
	}
	first := check()
	require.Equal(t, Invalid, first.verdict)
	require.Positive(t, first.all)
	stop := burn()
	loaded := check()
	stop()
	assert.Equal(t, first, loaded)
}
