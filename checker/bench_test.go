package checker

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/history/historytest"
)

// The checker at scale (issue 8): `make bench` runs these and `deadbolt
// bench` prints them with their targets: 1M operations read and checked
// by the default checkers in under 2s and 300MB, and one contended key
// (50 clients, 10k operations, one planted double hold) found invalid in
// under 5s.

// bigShape is a long run: 100 keys, 50 clients, 1M history lines.
var bigShape = historytest.Config{Seed: 1, Keys: 100, Clients: 50, Ops: 1_000_000, Info: 0.001, Renew: 0.05, Overstay: 0.01}

// contendedShape is one key fought over by 50 clients, with one double
// hold whose victim holds for 150us.
var contendedShape = historytest.Config{Seed: 1, Keys: 1, Clients: 50, Ops: 10_000, Info: 0.001, Renew: 0.05, Overstay: 0.01,
	DoubleHolds: 1, PlantedHold: 150 * time.Microsecond}

var (
	bigOnce sync.Once
	bigFile string
)

// big writes the long run to a file once per process and returns its
// path; nothing of it stays in memory.
func big(b *testing.B) string {
	bigOnce.Do(func() {
		h := historytest.Generate(bigShape)
		f, err := os.CreateTemp("", "deadbolt-bench-*.jsonl")
		if err == nil {
			err = historytest.WriteJSONL(f, h.Ops)
			f.Close()
		}
		if err != nil {
			panic(err)
		}
		bigFile = f.Name()
	})
	return bigFile
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		code = compareHandMade()
	}
	if bigFile != "" {
		os.Remove(bigFile)
	}
	os.Exit(code)
}

func BenchmarkChecker(b *testing.B) {
	// read+check-1M is `deadbolt check` of a 1M-line history.jsonl:
	// streamed through the default checkers, key by key from a spill;
	// read+check-1M-whole is the same with the lock view kept whole, as
	// deadbolt check did before (Options.Whole).
	for _, whole := range []bool{false, true} {
		name := "read+check-1M"
		if whole {
			name += "-whole"
		}
		b.Run(name, func(b *testing.B) {
			path := big(b)
			if st, err := os.Stat(path); err == nil {
				limit, gc := MemorySettings(st.Size(), Options{Whole: whole}) // as deadbolt check sets them
				defer debug.SetMemoryLimit(debug.SetMemoryLimit(limit))
				defer debug.SetGCPercent(debug.SetGCPercent(gc))
			}
			peak := watchPeak(b)
			for b.Loop() {
				r, err := CheckFile(path, Options{Whole: whole})
				if err != nil {
					b.Fatal(err)
				}
				mustBe(b, Valid, r)
			}
			peak.report()
		})
	}
	// read-1M is the reading alone, into history.Ops.
	b.Run("read-1M", func(b *testing.B) {
		path := big(b)
		peak := watchPeak(b)
		for b.Loop() {
			if _, err := history.ReadFile(path); err != nil {
				b.Fatal(err)
			}
		}
		peak.report()
	})
	// check-1M is Check of the history in memory, as a run checks its own.
	b.Run("check-1M", func(b *testing.B) {
		ops, err := history.ReadFile(big(b))
		if err != nil {
			b.Fatal(err)
		}
		peak := watchPeak(b)
		for b.Loop() {
			mustBe(b, Valid, Check(ops, Options{}))
		}
		peak.report()
	})
	b.Run("planted-50x10k", func(b *testing.B) {
		ops := historytest.Generate(contendedShape).Ops
		peak := watchPeak(b)
		for b.Loop() {
			r := Check(ops, Options{})
			mustBe(b, Invalid, r)
			if ll, _ := r.Check("lease-lock"); ll.Verdict != Invalid {
				b.Fatalf("the lease-lock model says %s: %s", ll.Verdict, ll.Reason)
			}
		}
		peak.report()
	})
}

func mustBe(b *testing.B, want Verdict, r Report) {
	if r.Verdict != want {
		b.Fatalf("verdict %s, want %s: %s", r.Verdict, want, r.Reason)
	}
}

// peakUnit is the benchmark metric of the most memory the Go runtime held
// from the operating system at once during the benchmark, in MB: what the
// process's resident size is made of, as B/op (all bytes ever allocated)
// is not. reports.PeakUnit reads it.
const peakUnit = "peak-MB"

type peakWatch struct {
	b    *testing.B
	stop chan struct{}
	done chan uint64
}

// watchPeak samples the runtime's memory every millisecond until report,
// after returning what is free to the operating system. What the
// benchmark held before (the input of one that checks a history in
// memory) counts: the figure is the process's, as its RSS would be.
func watchPeak(b *testing.B) *peakWatch {
	debug.FreeOSMemory()
	w := &peakWatch{b: b, stop: make(chan struct{}), done: make(chan uint64)}
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
		var peak uint64
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64()-s[1].Value.Uint64())
			select {
			case <-w.stop:
				w.done <- peak
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *peakWatch) report() {
	close(w.stop)
	w.b.ReportMetric(float64(<-w.done)/(1<<20), peakUnit)
}
