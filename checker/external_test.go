package checker_test

import (
	"bytes"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/history/historytest"
)

// A lock-view checker added from outside the package is one type and one
// Register call: being Parted, it runs on every path a history takes
// (Check, and CheckReader key by key and window by window, and on a key
// checked whole), with no case for it anywhere.

// longHolds flags every holding window longer than limit.
type longHolds struct{ limit int64 }

// pathsSeen counts the parts longHolds was asked for, by where they lay.
var pathsSeen struct {
	sync.Mutex
	history, key, window int
}

func init() {
	checker.Register("test-long-holds", "TEST: a holding window longer than 3ms",
		func(checker.Options) checker.Checker { return longHolds{limit: int64(3 * time.Millisecond)} })
}

func (c longHolds) Check(in *checker.Input) checker.Result {
	part, _ := c.Part(in, checker.PartAt{Last: true})
	return c.Merge(in, []any{part})
}

func (c longHolds) Part(in *checker.Input, at checker.PartAt) (any, any) {
	pathsSeen.Lock()
	switch {
	case at.Windowed():
		pathsSeen.window++
	case at.Key != "":
		pathsSeen.key++
	default:
		pathsSeen.history++
	}
	pathsSeen.Unlock()
	var long []checker.Hold
	for _, hs := range in.Holds {
		for _, h := range hs {
			if h.Until-h.AcquiredAt > c.limit {
				long = append(long, h)
			}
		}
	}
	return long, nil
}

func (c longHolds) Merge(_ *checker.Input, parts []any) checker.Result {
	r := checker.Result{Checker: "test-long-holds", Verdict: checker.Valid, Applicable: true, Anomalies: []checker.Anomaly{}}
	for _, p := range parts {
		for _, h := range p.([]checker.Hold) {
			r.Anomalies = append(r.Anomalies, checker.Anomaly{Kind: "long-hold", At: h.AcquiredAt, Leases: []string{h.Lease},
				Text: fmt.Sprintf("lease %s held for %dus", h.Lease, (h.Until-h.AcquiredAt)/1000)})
		}
	}
	sort.Slice(r.Anomalies, func(i, j int) bool {
		a, b := r.Anomalies[i], r.Anomalies[j]
		return a.At < b.At || a.At == b.At && a.Leases[0] < b.Leases[0]
	})
	if len(r.Anomalies) > 0 {
		r.Verdict = checker.Invalid
	}
	r.Reason = fmt.Sprintf("%d holds over the limit", len(r.Anomalies))
	return r
}

func TestACheckerFromOutsideRunsOnEveryPath(t *testing.T) {
	// Two long keys (windows are cut) with planted double holds, which
	// lease-lock cannot prove legal in windows: their keys are checked whole.
	h := historytest.Generate(historytest.Config{Seed: 3, Keys: 2, Clients: 10, Ops: 20000, Renew: 0.1, Overstay: 0.05,
		DoubleHolds: 2, PlantedHold: 150 * time.Microsecond})
	holds, err := checker.Holds(h.Ops)
	require.NoError(t, err)
	want := 0
	for _, hs := range holds {
		for _, h := range hs {
			if h.Until-h.AcquiredAt > int64(3*time.Millisecond) {
				want++
			}
		}
	}
	require.Positive(t, want, "the history has long holds to find")
	var file bytes.Buffer
	require.NoError(t, historytest.WriteJSONL(&file, h.Ops))
	opts := checker.Options{Checkers: []string{"lease-lock", "test-long-holds"}}

	resultOf := func(r checker.Report) checker.Result {
		require.Len(t, r.Checks, 2)
		return r.Checks[1]
	}
	seen := func() (history, key, window int) {
		pathsSeen.Lock()
		defer pathsSeen.Unlock()
		return pathsSeen.history, pathsSeen.key, pathsSeen.window
	}
	h0, _, _ := seen()
	whole := resultOf(checker.Check(h.Ops, opts))
	assert.Len(t, whole.Anomalies, want)
	assert.Equal(t, checker.Invalid, whole.Verdict)
	h1, k1, w1 := seen()
	assert.Equal(t, 1, h1-h0, "Check asks for the whole history's one part")

	keyed, err := checker.CheckReader(bytes.NewReader(file.Bytes()), opts)
	require.NoError(t, err)
	assert.Equal(t, whole, resultOf(keyed), "key by key, as a whole")
	assert.Equal(t, checker.Invalid, keyed.Checks[0].Verdict, "lease-lock finds the planted double holds")
	_, k2, w2 := seen()
	assert.Greater(t, w2-w1, 2, "the keys were cut into windows")
	assert.Positive(t, k2-k1, "a key lease-lock could not prove in windows was checked whole")
}

// A checker that would judge the lock service on every history must be
// able to check one too long to hold: registering one that is not Parted
// is refused at once.
func TestALockServiceCheckerMustBeParted(t *testing.T) {
	require.PanicsWithValue(t, "checker: test-whole-only judges the lock service but is not Parted: it could not check a history too long to hold", func() {
		checker.RegisterScoped("test-whole-only", "TEST", checker.LockService,
			func(checker.Options) checker.Checker { return wholeOnly{} })
	})
	require.NotContains(t, checker.Names(), "test-whole-only")
}

type wholeOnly struct{}

func (wholeOnly) Check(*checker.Input) checker.Result { return checker.Result{} }
