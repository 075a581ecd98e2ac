package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchOutput is `go test -bench -benchmem -count 3` output as it comes,
// with a log line that split one result from its name.
const benchOutput = `goos: linux
goarch: amd64
pkg: github.com/deadbolt-lab/deadbolt/locks
cpu: Some CPU
BenchmarkAcquireRelease/ceiling-2         	    4000	    100000 ns/op	     482 B/op	       9 allocs/op
BenchmarkAcquireRelease/ceiling-2         	    4000	    110000 ns/op	     482 B/op	       9 allocs/op
BenchmarkAcquireRelease/ceiling-2         	    4000	     90000 ns/op	     482 B/op	       9 allocs/op
BenchmarkAcquireRelease/simple-2          	    4000	    104000 ns/op	    1434 B/op	      25 allocs/op
BenchmarkAcquireRelease/simple-2          	    4000	    105000 ns/op	    1434 B/op	      25 allocs/op
BenchmarkAcquireRelease/simple-2          	    4000	    500000 ns/op	    1436 B/op	      26 allocs/op
BenchmarkAcquireRelease/bsm-2             	    3000	    150000 ns/op	    1648 B/op	      33 allocs/op
BenchmarkAcquireRelease/redsync-2         	    3000	    100000 ns/op	    2514 B/op	      42 allocs/op
BenchmarkAcquireRelease/simple-wait@replica-2         	redis: 2026/11/22 04:26:44 sentinel.go:1081: sentinel: selected
redis: 2026/11/22 04:26:44 sentinel.go:1248: sentinel: new master
    2725	    400000 ns/op	    2864 B/op	      53 allocs/op
BenchmarkOther	 1000	  2000 ns/op
PASS
ok  	github.com/deadbolt-lab/deadbolt/locks	13.518s
`

func TestParseBenchTakesMediansPerBenchmark(t *testing.T) {
	bt, err := ParseBench(strings.NewReader(benchOutput))
	require.NoError(t, err)
	require.Empty(t, bt.Failures)
	require.Len(t, bt.Results, 6)
	c, ok := bt.Find("AcquireRelease", "ceiling")
	require.True(t, ok)
	require.Equal(t, BenchResult{Family: "AcquireRelease", Name: "ceiling", Runs: 3, NsPerOp: 100000, BytesPerOp: 482, AllocsPerOp: 9, Spread: 0.1, NsRuns: []float64{100000, 110000, 90000}}, c)
	s, _ := bt.Find("AcquireRelease", "simple")
	require.Equal(t, 105000.0, s.NsPerOp, "the median shrugs off one noisy run")
	require.Equal(t, 1434.0, s.BytesPerOp)
	w, ok := bt.Find("AcquireRelease", "simple-wait@replica")
	require.True(t, ok, "a result split from its name by a log line is kept")
	require.Equal(t, 400000.0, w.NsPerOp)
	o, ok := bt.Find("Other", "")
	require.True(t, ok)
	require.Equal(t, -1.0, o.AllocsPerOp, "no -benchmem column")
	require.InDelta(t, 100000.0/104000, Throughput(s, c), 1e-9,
		"runs pair up: 100/104, 110/105 and 90/500, whose median is 100/104")
	b, _ := bt.Find("AcquireRelease", "bsm")
	require.InDelta(t, 105000.0/150000, Throughput(b, s), 1e-9, "unequal run counts: the ratio of the medians")
}

func TestBenchTargets(t *testing.T) {
	bt, err := ParseBench(strings.NewReader(benchOutput))
	require.NoError(t, err)
	got := map[string]BenchTarget{}
	for _, g := range bt.Targets() {
		got[g.Goal] = g
	}
	require.True(t, got["simple >= 0.95x ceiling"].Met, "0.96x")
	require.True(t, got["simple faster than bsm"].Met)
	require.False(t, got["simple faster than redsync"].Met, "redsync's median is faster here")
	require.Equal(t, "reentrant", got["reentrant >= 0.80x simple"].Missing)

	var out bytes.Buffer
	require.NoError(t, bt.Write(&out))
	require.Regexp(t, `AcquireRelease/ceiling\s+3\s+100000\s+10%\s+10000\s+9\s+482\s+1\.00x`, out.String())
	require.Regexp(t, `AcquireRelease/bsm\s+1\s+150000\s+0%\s+6667\s+33\s+1648\s+0\.67x`, out.String())
	require.Regexp(t, `Other\s+1\s+2000\s+0%\s+500000\s+-\s+-\s+-`, out.String())
	require.Regexp(t, `simple faster than redsync\s+0\.95x\s+MISSED`, out.String())
	require.Regexp(t, `reentrant >= 0\.80x simple\s+-\s+n/a: no reentrant benchmark`, out.String())
}

func TestParseBenchFailures(t *testing.T) {
	bt, err := ParseBench(strings.NewReader(`BenchmarkAcquireRelease/ceiling-2   10  100 ns/op
--- FAIL: BenchmarkAcquireRelease/fair
    bench_test.go:120: acquire: lock not acquired
FAIL
exit status 1
FAIL	github.com/deadbolt-lab/deadbolt/locks	3.1s
`))
	require.NoError(t, err)
	require.Equal(t, []string{"BenchmarkAcquireRelease/fair", "github.com/deadbolt-lab/deadbolt/locks"}, bt.Failures)
	_, err = ParseBench(strings.NewReader("BenchmarkX-2  10  1e3x ns/op\n"))
	require.Error(t, err)
}

func TestInterleavedRatiosDecideTheTargets(t *testing.T) {
	// ns/op alone would say simple is slower than the ceiling by a third
	// (noise between runs); the interleaved ratios say 0.97.
	out := `BenchmarkAcquireRelease/ceiling-2   5000  200000 ns/op  482 B/op  9 allocs/op
BenchmarkAcquireRelease/simple-2    4000  300000 ns/op  0.97 x-ceiling  1434 B/op  25 allocs/op
BenchmarkAcquireRelease/reentrant-2 4000  250000 ns/op  0.90 x-ceiling  2584 B/op  47 allocs/op
BenchmarkAcquireRelease/bsm-2       4000  200000 ns/op  0.95 x-ceiling  1648 B/op  33 allocs/op
BenchmarkAcquireRelease/redsync-2   4000  250000 ns/op  0.80 x-ceiling  2514 B/op  42 allocs/op
`
	tab, err := ParseBench(strings.NewReader(out))
	require.NoError(t, err)
	simple, ok := tab.Find(AcquireReleaseFamily, "simple")
	require.True(t, ok)
	require.Equal(t, []float64{0.97}, simple.VsCeilingRuns)
	got := map[string]float64{}
	for _, g := range tab.Targets() {
		require.True(t, g.Met, g.Goal)
		got[g.Goal] = g.Ratio
	}
	require.InDelta(t, 0.97, got["simple >= 0.95x ceiling"], 1e-9)
	require.InDelta(t, 0.97/0.95, got["simple faster than bsm"], 1e-9)
	require.InDelta(t, 0.90/0.97, got["reentrant >= 0.80x simple"], 1e-9)
}

// The checker's benchmarks print apart from the locks', in seconds and
// megabytes, with their targets met or missed.
func TestCheckerBenchmarksAndTargets(t *testing.T) {
	out := benchOutput + `pkg: github.com/deadbolt-lab/deadbolt/checker
BenchmarkChecker/read+check-1M-2   1  1840000000 ns/op  250.5 peak-MB  900000000 B/op  4000000 allocs/op
BenchmarkChecker/read+check-1M-2   1  2100000000 ns/op  320.0 peak-MB  900000000 B/op  4000000 allocs/op
BenchmarkChecker/read+check-1M-2   1  1900000000 ns/op  280.0 peak-MB  900000000 B/op  4000000 allocs/op
BenchmarkChecker/planted-50x10k-2  30   40000000 ns/op   20.0 peak-MB   10000000 B/op    50000 allocs/op
`
	bt, err := ParseBench(strings.NewReader(out))
	require.NoError(t, err)
	c, ok := bt.Find(CheckerFamily, "read+check-1M")
	require.True(t, ok)
	require.Equal(t, 280.0, c.PeakMB, "the median run")
	got := map[string]BenchTarget{}
	for _, g := range bt.CheckerTargets() {
		got[g.Goal] = g
	}
	require.True(t, got["1M ops read+checked < 2s"].Met, "1.9s")
	require.True(t, got["1M ops read+checked < 300MB"].Met, "280MB")
	require.True(t, got["planted 50x10k invalid < 5s"].Met)

	var w bytes.Buffer
	require.NoError(t, bt.Write(&w))
	require.Regexp(t, `AcquireRelease/ceiling\s+3\s+100000`, w.String(), "the lock table stays")
	require.Regexp(t, `Checker/read\+check-1M\s+3\s+1\.900s\s+11%\s+4000000\s+858\s+280`, w.String())
	require.Regexp(t, `targets \(Checker\):\s+1M ops read\+checked < 2s\s+1\.900s\s+met`, w.String())
	require.Regexp(t, `1M ops read\+checked < 300MB\s+280MB\s+met`, w.String())

	slow := strings.ReplaceAll(out, "40000000 ns/op", "6000000000 ns/op")
	bt, err = ParseBench(strings.NewReader(slow))
	require.NoError(t, err)
	w.Reset()
	require.NoError(t, bt.Write(&w))
	require.Regexp(t, `planted 50x10k invalid < 5s\s+6\.000s\s+MISSED`, w.String())

	// Without checker benchmarks there are no checker targets to miss.
	bt, err = ParseBench(strings.NewReader(benchOutput))
	require.NoError(t, err)
	require.Empty(t, bt.CheckerTargets())
}
