package checker

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/history/historytest"
)

// The key-by-key check of a streamed history (keyed.go) must say exactly
// what the whole-history check says: the same report, reasons, anomalies
// and stats, or the same error. It is compared on every hand-made history
// the other tests build (after they ran, in TestMain), on generated ones
// with planted double holds and without, and on the simulated servers.

// handMade collects every history builder.build made.
var handMade struct {
	sync.Mutex
	ops [][]history.Op
}

// bothWays checks ops as a file both ways and returns the two reports
// as JSON, or the two errors.
func bothWays(ops []history.Op, opts Options) (keyed, whole string) {
	var buf bytes.Buffer
	if err := historytest.WriteJSONL(&buf, ops); err != nil {
		panic(err)
	}
	show := func(o Options) string {
		r, err := CheckReader(bytes.NewReader(buf.Bytes()), o)
		if err != nil {
			return "error: " + err.Error()
		}
		j, err := json.Marshal(r)
		if err != nil {
			panic(err)
		}
		return string(j)
	}
	wholeOpts := opts
	wholeOpts.Whole = true
	return show(opts), show(wholeOpts)
}

// tinyWindows makes the keyed check cut a key at every quiescent place it
// may, so that the comparisons cross many window boundaries, and replay
// every window it skips as blocked, to prove it could not be cut; the
// returned function restores the settings.
func tinyWindows() func() {
	m, c, v := minWindowOps, confirmOps, verifyBlocks
	minWindowOps, confirmOps, verifyBlocks = 1, 1, true
	return func() { minWindowOps, confirmOps, verifyBlocks = m, c, v }
}

// compareHandMade compares the two ways on every hand-made history, with
// and without re-entry; it returns the exit code for TestMain.
func compareHandMade() int {
	handMade.Lock()
	defer handMade.Unlock()
	if len(handMade.ops) == 0 && flag.Lookup("test.bench").Value.String() != "" {
		return 0 // benchmarks alone (go test -run '^$' -bench ...): no test built any
	}
	if len(handMade.ops) < 100 {
		fmt.Printf("FAIL: only %d hand-made histories were built: the comparison would prove little\n", len(handMade.ops))
		return 1
	}
	bad := 0
	defer tinyWindows()()
	for i, ops := range handMade.ops {
		if len(ops) == 0 {
			continue
		}
		for _, re := range []bool{false, true} {
			// A budget of 100k steps: one history is built to exhaust any
			// budget; the rest take a few hundred steps.
			k, w := bothWays(ops, Options{Reentrant: re, ModelSteps: 100_000})
			if k != w {
				bad++
				fmt.Printf("FAIL: hand-made history %d (reentrant %v): the key-by-key check differs\nkeyed: %s\nwhole: %s\n", i, re, k, w)
			}
		}
	}
	bad += comparePathsHandMade(handMade.ops)
	if bad > 0 {
		return 1
	}
	if testing.Verbose() {
		fmt.Printf("the key-by-key check agreed with the whole-history check on %d hand-made histories (%d windows cut, %d keys checked whole after all)\n",
			len(handMade.ops), windowCounts.cuts.Load(), windowCounts.redone.Load())
	}
	return 0
}

func TestKeyedCheckMatchesWholeOnGenerated(t *testing.T) {
	for _, tiny := range []bool{false, true} {
		if tiny {
			defer tinyWindows()()
		}
		for i, shape := range generatedShapes {
			for _, planted := range []int{0, 3} {
				shape.Seed, shape.DoubleHolds, shape.PlantedHold = uint64(i+7), planted, 150*time.Microsecond
				h := historytest.Generate(shape)
				cuts, redone := windowCounts.cuts.Load(), windowCounts.redone.Load()
				k, w := bothWays(h.Ops, Options{})
				require.Equal(t, w, k, "shape %d, %d planted, tiny windows %v", i, planted, tiny)
				t.Logf("shape %d, %d planted, tiny %v: %d cuts, %d keys checked whole after all", i, planted, tiny,
					windowCounts.cuts.Load()-cuts, windowCounts.redone.Load()-redone)
				want := "valid"
				if planted > 0 {
					want = "invalid"
				}
				assert.Contains(t, k, fmt.Sprintf(`{"verdict":%q`, want), "shape %d: the comparison is of a history judged as planted", i)
			}
		}
	}
}

func TestKeyedCheckMatchesWholeOnSimulated(t *testing.T) {
	defer tinyWindows()()
	for seed := int64(1); seed <= 10; seed++ {
		for _, steal := range []bool{false, true} {
			ops, _ := simulate(seed, steal)
			k, w := bothWays(ops, Options{})
			require.Equal(t, w, k, "seed %d, steal %v", seed, steal)
		}
	}
}

// A history cut or malformed gets the same error both ways.
func TestKeyedCheckSameErrors(t *testing.T) {
	ops := newHistory().acquire(0, "k", "a", 0, ms(1), ms(100), 0).acquire(1, "k", "a", ms(2), ms(3), ms(100), 0).build()
	k, w := bothWays(ops, Options{})
	assert.Equal(t, w, k)
	assert.Contains(t, k, "error: ")
}

// The spill leaves nothing behind in the temporary directory.
func TestKeyedCheckCleansUp(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	ops := historytest.Generate(historytest.Config{Seed: 1, Keys: 5, Clients: 5, Ops: 2000}).Ops
	k, _ := bothWays(ops, Options{})
	assert.Contains(t, k, `"verdict":"valid"`)
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, left)
}
