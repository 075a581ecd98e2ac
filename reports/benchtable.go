package reports

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// BenchResult is one benchmark over all its runs in a `go test -bench`
// output (-count N, or several outputs concatenated): the median of each
// metric, as benchstat reports it.
type BenchResult struct {
	// Family is the top-level benchmark without "Benchmark"
	// ("AcquireRelease"); Name the rest ("simple", "redlock@3masters"),
	// empty for a benchmark without sub-benchmarks.
	Family, Name string
	Runs         int
	NsPerOp      float64
	BytesPerOp   float64 // -1 without -benchmem
	AllocsPerOp  float64 // -1 without -benchmem
	// Spread is the largest distance of a run's ns/op from the median, as
	// a fraction of the median: the noise of this row.
	Spread float64
	// NsRuns is ns/op of each run, in input order.
	NsRuns []float64
	// VsCeilingRuns is the x-ceiling metric of each run, where the
	// benchmark reports one: the ceiling's time over the row's, both timed
	// interleaved in the same iterations, so machine noise cancels out.
	VsCeilingRuns []float64
	// PeakMB is the median of the peak-MB metric (the most memory the
	// process held at once), 0 when the benchmark reports none.
	PeakMB float64
}

// BenchTarget is one performance goal checked against the results.
type BenchTarget struct {
	// Family is the benchmark family the goal is about.
	Family string
	Goal   string
	// Ratio is the throughput ratio the goal is about; Met says whether it
	// was reached. Missing names what the input lacked to tell (Met false).
	Ratio   float64
	Met     bool
	Missing string
	// Shown is the measured figure as printed, for goals not about a
	// ratio ("1.84s"); empty for ratios.
	Shown string
}

// BenchTable is a parsed benchmark output.
type BenchTable struct {
	Results []BenchResult
	// Failures are the benchmarks (or packages) the output reports failed.
	Failures []string
}

// CeilingName is the sub-benchmark every other one in its family is
// compared with: the bare Redis commands of a lock cycle.
const CeilingName = "ceiling"

var (
	benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(\d.*)$`)
	benchName = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s*$`)
	// A result line whose name line was split off by output in between.
	benchTail = regexp.MustCompile(`^\s*(\d+)\s+(\d[\d.]* ns/op.*)$`)
	benchFail = regexp.MustCompile(`^\s*--- FAIL: (\S+)|^FAIL\s+(\S+)`)
)

// ParseBench reads `go test -bench` output. A name is taken without its
// "-GOMAXPROCS" suffix (so a benchmark name must not end in -<digits>).
func ParseBench(r io.Reader) (*BenchTable, error) {
	type runs struct{ ns, bytes, allocs, vs, peak []float64 }
	byName := map[string]*runs{}
	var order []string
	add := func(name, metrics string) error {
		ns, bytes, allocs, vs, peak := -1.0, -1.0, -1.0, -1.0, -1.0
		f := strings.Fields(metrics)
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return fmt.Errorf("benchmark %s: bad value %q", name, f[i])
			}
			switch f[i+1] {
			case "ns/op":
				ns = v
			case "B/op":
				bytes = v
			case "allocs/op":
				allocs = v
			case VsCeilingUnit:
				vs = v
			case PeakUnit:
				peak = v
			}
		}
		if ns < 0 {
			return fmt.Errorf("benchmark %s: no ns/op in %q", name, metrics)
		}
		r := byName[name]
		if r == nil {
			r = &runs{}
			byName[name] = r
			order = append(order, name)
		}
		r.ns, r.bytes, r.allocs = append(r.ns, ns), append(r.bytes, bytes), append(r.allocs, allocs)
		if vs > 0 {
			r.vs = append(r.vs, vs)
		}
		if peak >= 0 {
			r.peak = append(r.peak, peak)
		}
		return nil
	}
	t := &BenchTable{}
	pending := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if m := benchLine.FindStringSubmatch(line); m != nil {
			if err := add(m[1], m[3]); err != nil {
				return nil, err
			}
			pending = ""
			continue
		}
		if m := benchFail.FindStringSubmatch(line); m != nil {
			t.Failures = append(t.Failures, m[1]+m[2])
			continue
		}
		if strings.HasPrefix(line, "Benchmark") {
			// A name line cut short by log output: its result comes later.
			if m := benchName.FindStringSubmatch(strings.Fields(line)[0]); m != nil {
				pending = m[1]
			}
			continue
		}
		if m := benchTail.FindStringSubmatch(line); m != nil && pending != "" {
			if err := add(pending, m[2]); err != nil {
				return nil, err
			}
			pending = ""
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, name := range order {
		r := byName[name]
		full := strings.TrimPrefix(name, "Benchmark")
		family, sub, _ := strings.Cut(full, "/")
		med := median(r.ns)
		spread := 0.0
		for _, v := range r.ns {
			spread = max(spread, math.Abs(v-med)/med)
		}
		res := BenchResult{
			Family: family, Name: sub, Runs: len(r.ns),
			NsPerOp: med, BytesPerOp: median(r.bytes), AllocsPerOp: median(r.allocs), Spread: spread, NsRuns: r.ns, VsCeilingRuns: r.vs,
		}
		if len(r.peak) > 0 {
			res.PeakMB = median(r.peak)
		}
		t.Results = append(t.Results, res)
	}
	return t, nil
}

func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Find returns the result of one sub-benchmark.
func (t *BenchTable) Find(family, name string) (BenchResult, bool) {
	for _, r := range t.Results {
		if r.Family == family && r.Name == name {
			return r, true
		}
	}
	return BenchResult{}, false
}

// VsCeilingUnit is the metric a benchmark reports when it times the
// ceiling's cycle interleaved with its own.
const VsCeilingUnit = "x-ceiling"

// Throughput is a's throughput relative to b's: 0.95 means a runs at 95%
// of b's rate. Where both carry the interleaved x-ceiling metric (the
// ceiling itself counts as 1), it is the ratio of those, which machine
// noise barely moves. Otherwise ns/op are compared: run i of a with run i
// of b when both have as many runs (noise comes in bursts the two mostly
// share), else the medians.
func Throughput(a, b BenchResult) float64 {
	va, vb := vsCeiling(a), vsCeiling(b)
	switch {
	case va != nil && vb != nil && len(va) == len(vb):
		return median(pairRatios(va, vb))
	case va != nil && vb != nil:
		return median(va) / median(vb)
	case len(a.NsRuns) > 0 && len(a.NsRuns) == len(b.NsRuns):
		return median(pairRatios(b.NsRuns, a.NsRuns))
	}
	return b.NsPerOp / a.NsPerOp
}

// vsCeiling is a row's interleaved ratios to the ceiling, nil when it has none.
func vsCeiling(r BenchResult) []float64 {
	if r.Name == CeilingName {
		ones := make([]float64, max(r.Runs, 1))
		for i := range ones {
			ones[i] = 1
		}
		return ones
	}
	if len(r.VsCeilingRuns) == 0 {
		return nil
	}
	return r.VsCeilingRuns
}

func pairRatios(num, den []float64) []float64 {
	out := make([]float64, len(num))
	for i := range out {
		out[i] = num[i] / den[i]
	}
	return out
}

// AcquireReleaseFamily is the family the lock targets are stated for.
const AcquireReleaseFamily = "AcquireRelease"

// Targets checks the lock benchmarks' goals: simple at >= 0.95x the
// ceiling's throughput and faster than bsm and redsync; reentrant at
// >= 0.8x simple's; and, when the input has the checker's benchmarks,
// theirs (CheckerTargets).
func (t *BenchTable) Targets() []BenchTarget {
	fam := AcquireReleaseFamily
	goal := func(goal, a, b string, atLeast float64) BenchTarget {
		ra, okA := t.Find(fam, a)
		rb, okB := t.Find(fam, b)
		switch {
		case !okA:
			return BenchTarget{Family: fam, Goal: goal, Missing: a}
		case !okB:
			return BenchTarget{Family: fam, Goal: goal, Missing: b}
		}
		r := Throughput(ra, rb)
		met := r >= atLeast
		if atLeast == 1 {
			met = r > 1
		}
		return BenchTarget{Family: fam, Goal: goal, Ratio: r, Met: met}
	}
	out := []BenchTarget{
		goal("simple >= 0.95x ceiling", "simple", CeilingName, 0.95),
		goal("simple faster than bsm", "simple", "bsm", 1),
		goal("simple faster than redsync", "simple", "redsync", 1),
		goal("reentrant >= 0.80x simple", "reentrant", "simple", 0.8),
	}
	return append(out, t.CheckerTargets()...)
}

// CheckerFamily is the checker's benchmarks (checker/bench_test.go).
const CheckerFamily = "Checker"

// PeakUnit is the checker benchmarks' memory metric: the most memory the
// runtime held at once, in MB.
const PeakUnit = "peak-MB"

// CheckerTargets checks the checker's goals (issue 8): a 1M-line history
// read and checked by the default checkers in under 2s and 300MB, and the
// one contended key (50 clients, 10k operations, one planted double hold)
// found invalid in under 5s (the benchmark fails when it is not found).
// None when the input has no checker benchmark.
func (t *BenchTable) CheckerTargets() []BenchTarget {
	has := false
	for _, r := range t.Results {
		has = has || r.Family == CheckerFamily
	}
	if !has {
		return nil
	}
	under := func(goal, name string, limit float64, value func(BenchResult) float64, show func(float64) string) BenchTarget {
		r, ok := t.Find(CheckerFamily, name)
		if !ok || value(r) <= 0 {
			return BenchTarget{Family: CheckerFamily, Goal: goal, Missing: name}
		}
		v := value(r)
		return BenchTarget{Family: CheckerFamily, Goal: goal, Ratio: v / limit, Met: v < limit, Shown: show(v)}
	}
	ns := func(r BenchResult) float64 { return r.NsPerOp }
	return []BenchTarget{
		under("1M ops read+checked < 2s", "read+check-1M", 2e9, ns, seconds),
		under("1M ops read+checked < 300MB", "read+check-1M", 300,
			func(r BenchResult) float64 { return r.PeakMB }, func(v float64) string { return fmt.Sprintf("%.0fMB", v) }),
		under("planted 50x10k invalid < 5s", "planted-50x10k", 5e9, ns, seconds),
	}
}

// Write prints the lock results side by side, one family after the
// other, each row with its throughput relative to its family's ceiling,
// then the checker's results, the targets and any failures.
func (t *BenchTable) Write(w io.Writer) error {
	var locks, checks []BenchResult
	for _, r := range t.Results {
		if r.Family == CheckerFamily {
			checks = append(checks, r)
		} else {
			locks = append(locks, r)
		}
	}
	width := len("BENCHMARK")
	for _, r := range t.Results {
		width = max(width, len(r.label()))
	}
	if len(locks) > 0 {
		row := "%-*s %5s %10s %5s %8s %10s %7s %11s\n"
		fmt.Fprintf(w, row, width, "BENCHMARK", "RUNS", "NS/OP", "±", "OPS/S", "ALLOCS/OP", "B/OP", "VS CEILING")
		for _, r := range locks {
			vs := "-"
			if c, ok := t.Find(r.Family, CeilingName); ok {
				vs = fmt.Sprintf("%.2fx", Throughput(r, c))
			}
			fmt.Fprintf(w, row, width, r.label(), strconv.Itoa(r.Runs), metric(r.NsPerOp),
				fmt.Sprintf("%.0f%%", 100*r.Spread), metric(1e9/r.NsPerOp), metric(r.AllocsPerOp), metric(r.BytesPerOp), vs)
		}
		fmt.Fprintf(w, "\nNS/OP, ALLOCS/OP, B/OP: medians over RUNS; ±: the widest run's distance from the median;\n"+
			"VS CEILING: throughput relative to the family's ceiling; where the row reports %s, the median\n"+
			"over runs of the ceiling's time over the row's, both timed interleaved in the same iterations;\n"+
			"otherwise the ceiling's ns/op over the row's in the same run.\n", VsCeilingUnit)
	}
	if len(checks) > 0 {
		if len(locks) > 0 {
			fmt.Fprintln(w)
		}
		row := "%-*s %5s %10s %5s %10s %10s %8s\n"
		fmt.Fprintf(w, row, width, "BENCHMARK", "RUNS", "TIME/OP", "±", "ALLOCS/OP", "MB/OP", "PEAK MB")
		for _, r := range checks {
			mb, peak := "-", "-"
			if r.BytesPerOp >= 0 {
				mb = fmt.Sprintf("%.0f", r.BytesPerOp/(1<<20))
			}
			if r.PeakMB > 0 {
				peak = fmt.Sprintf("%.0f", r.PeakMB)
			}
			fmt.Fprintf(w, row, width, r.label(), strconv.Itoa(r.Runs), seconds(r.NsPerOp),
				fmt.Sprintf("%.0f%%", 100*r.Spread), metric(r.AllocsPerOp), mb, peak)
		}
		fmt.Fprintf(w, "\nTIME/OP, ALLOCS/OP, MB/OP (all bytes allocated): medians over RUNS; PEAK MB: the most memory\n"+
			"the runtime held at once during the benchmark (the process's footprint, as RSS would show it).\n")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	family := ""
	for _, g := range t.Targets() {
		if g.Family != family {
			family = g.Family
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(w, "\ntargets (%s):\n", family)
		}
		shown := fmt.Sprintf("%.2fx", g.Ratio)
		if g.Shown != "" {
			shown = g.Shown
		}
		switch {
		case g.Missing != "":
			fmt.Fprintf(tw, "  %s\t-\tn/a: no %s benchmark in the input\n", g.Goal, g.Missing)
		case g.Met:
			fmt.Fprintf(tw, "  %s\t%s\tmet\n", g.Goal, shown)
		default:
			fmt.Fprintf(tw, "  %s\t%s\tMISSED\n", g.Goal, shown)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, f := range t.Failures {
		fmt.Fprintf(w, "FAILED: %s\n", f)
	}
	return nil
}

// seconds formats ns/op for the checker's rows, which take seconds.
func seconds(ns float64) string {
	if ns < 0 {
		return "-"
	}
	return fmt.Sprintf("%.3fs", ns/1e9)
}

func (r BenchResult) label() string {
	if r.Name == "" {
		return r.Family
	}
	return r.Family + "/" + r.Name
}

func metric(v float64) string {
	if v < 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}
