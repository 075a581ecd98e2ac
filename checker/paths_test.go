package checker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/history/historytest"
)

// Every registered checker, down every path it declares, says the same of
// the same history: Check on the history whole, and CheckReader on it
// read from a file; a Parted checker also key by key with the usual
// window sizes, and with tiny windows (a cut at every place one may be
// taken). Each checker runs alone, so that none hides another's
// difference. It is compared on every hand-made history the other tests
// build (in TestMain: compareHandMade), on generated ones with planted
// double holds and without, and on the simulated servers.

// checkPath is one way a history reaches a checker: it returns the
// checker's result as JSON, or "malformed" when the history cannot be
// checked.
type checkPath struct {
	name string
	run  func(ops []history.Op, jsonl []byte, opts Options) string
}

// resultOf is the named check of r as JSON.
func resultOf(r Report, name string) string {
	for _, c := range r.Checks {
		if c.Checker == name {
			j, err := json.Marshal(c)
			if err != nil {
				panic(err)
			}
			return string(j)
		}
	}
	return "malformed"
}

func readPath(name string, opts Options, jsonl []byte) string {
	r, err := CheckReader(bytes.NewReader(jsonl), opts)
	if err != nil {
		return "malformed: " + err.Error()
	}
	return resultOf(r, name)
}

// pathsOf are the paths the named checker declares.
func pathsOf(name string) []checkPath {
	paths := []checkPath{
		{"Check", func(ops []history.Op, _ []byte, o Options) string { return resultOf(Check(ops, o), name) }},
		{"CheckReader whole", func(_ []history.Op, jsonl []byte, o Options) string {
			o.Whole = true
			return readPath(name, o, jsonl)
		}},
	}
	if _, ok := partedOf(name, Options{}); !ok {
		return paths
	}
	return append(paths,
		checkPath{"keyed", func(_ []history.Op, jsonl []byte, o Options) string { return readPath(name, o, jsonl) }},
		checkPath{"windowed", func(_ []history.Op, jsonl []byte, o Options) string {
			defer tinyWindows()()
			return readPath(name, o, jsonl)
		}})
}

// differences runs every registered checker down each of its paths on
// ops and describes each result that differs from Check's.
func differences(ops []history.Op, opts Options) []string {
	var buf bytes.Buffer
	if err := historytest.WriteJSONL(&buf, ops); err != nil {
		panic(err)
	}
	var diffs []string
	for _, name := range Names() {
		o := opts
		o.Checkers = []string{name}
		paths := pathsOf(name)
		want, by := paths[0].run(ops, buf.Bytes(), o), paths[0].name
		for i, p := range paths[1:] {
			got := p.run(ops, buf.Bytes(), o)
			if i == 0 && strings.HasPrefix(got, "malformed: ") {
				// The reading refuses a file Check takes as ops (time going
				// backwards, say): it is the file's paths that must agree.
				want, by = got, p.name
			} else if got != want {
				diffs = append(diffs, fmt.Sprintf("%s by %s differs from %s:\n%s: %s\n%s: %s", name, p.name, by, p.name, got, by, want))
			}
		}
	}
	return diffs
}

// comparePathsHandMade compares every checker's paths on every hand-made
// history, with re-entry too unless the tests are short, and returns how
// many differed.
func comparePathsHandMade(all [][]history.Op) (bad int) {
	reentrant := []bool{false, true}
	if testing.Short() {
		reentrant = reentrant[:1]
	}
	for i, ops := range all {
		if len(ops) == 0 {
			continue
		}
		for _, re := range reentrant {
			for _, d := range differences(ops, Options{Reentrant: re, ModelSteps: 100_000}) {
				bad++
				fmt.Printf("FAIL: hand-made history %d (reentrant %v): %s\n", i, re, d)
			}
		}
	}
	return bad
}

func TestEveryCheckerSameOnEveryPathGenerated(t *testing.T) {
	for i, shape := range generatedShapes[:3] {
		for _, planted := range []int{0, 3} {
			shape.Seed, shape.DoubleHolds, shape.PlantedHold = uint64(i+11), planted, 150*time.Microsecond
			shape.Ops /= 4 // each checker runs alone, four ways
			ops := historytest.Generate(shape).Ops
			assert.Empty(t, differences(ops, Options{}), "shape %d, %d planted", i, planted)
		}
	}
}

func TestEveryCheckerSameOnEveryPathSimulated(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		for _, steal := range []bool{false, true} {
			ops, _ := simulate(seed, steal)
			assert.Empty(t, differences(ops, Options{}), "seed %d, steal %v", seed, steal)
		}
	}
}

// The comparison can fail: a result changed on one path is caught.
func TestPathDifferencesAreFound(t *testing.T) {
	ops, _ := simulate(1, true)
	var buf bytes.Buffer
	require.NoError(t, historytest.WriteJSONL(&buf, ops))
	paths := pathsOf("double-holds")
	require.Len(t, paths, 4, "double-holds declares the keyed and windowed paths")
	want := paths[0].run(ops, buf.Bytes(), Options{Checkers: []string{"double-holds"}})
	assert.Contains(t, want, `"verdict":"invalid"`, "the stealing server is caught")
	// The file holds the first half of the history only: that path sees another history.
	var half bytes.Buffer
	require.NoError(t, historytest.WriteJSONL(&half, ops[:len(ops)/2]))
	got := paths[3].run(ops, half.Bytes(), Options{Checkers: []string{"double-holds"}})
	assert.True(t, got != want, "half the history has fewer double holds")
	assert.Len(t, pathsOf("lost-updates"), 2, "lost-updates reads pairs: only the whole paths")
}
