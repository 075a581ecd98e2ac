package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

func cmdCheck(ctx context.Context, args []string, stdout io.Writer) error {
	fset := flag.NewFlagSet("check", flag.ContinueOnError)
	cpuProfile := fset.String("cpuprofile", "", "write a CPU profile of the check to `FILE` (go tool pprof reads it)")
	steps := int64(checker.DefaultModelSteps)
	fset.Func("model-steps", fmt.Sprintf("search each key (or piece of one) in at most `N` steps of the lease-lock model; a key it cannot decide in them is unknown. A budget of work, not time: the verdict is the same on any machine (default %d)", steps),
		func(s string) error {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 1 {
				return fmt.Errorf("want a whole number of steps, 1 or more, got %q", s)
			}
			steps = n
			return nil
		})
	pos, err := parse(fset, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return badInput("check takes one run directory (or history.jsonl), got %d arguments", len(pos))
	}
	path := pos[0]
	if st, err := os.Stat(path); err != nil {
		return badInput("%v", err)
	} else if st.IsDir() {
		path = filepath.Join(path, scenarios.HistoryFile)
	}
	// Opening a FIFO or a device would wait on it, not read a history.
	for _, p := range []string{path, filepath.Join(filepath.Dir(path), scenarios.SpecFile), filepath.Join(filepath.Dir(path), reports.ResultsFile)} {
		if st, err := os.Stat(p); err == nil && !st.Mode().IsRegular() {
			return badInput("%s is not a regular file (%s)", p, st.Mode().Type())
		} else if err != nil && p == path {
			return badInput("%v", err)
		}
	}
	// The run's description says which checkers apply; a bare history
	// gets the checks of the lock service alone.
	opts := checker.Options{ModelSteps: steps, MinAcquires: scenarios.MinAcquires}
	from := "no scenario.json beside it: the lock-service checks only"
	spec, err := scenarios.ReadSpec(filepath.Dir(path))
	switch {
	case err == nil:
		opts.Checkers, opts.MinAcquires, opts.Reentrant = spec.Checkers, spec.MinAcquires, spec.Reentrant
		from = fmt.Sprintf("scenario.json: %s on %s, workload %s, driver %s", spec.Name, spec.Lock, spec.Workload, strings.Join(spec.Driver, " "))
		for _, n := range spec.Checkers {
			if err := checker.Lookup(n); err != nil {
				return badInput("%s: %v", filepath.Join(filepath.Dir(path), scenarios.SpecFile), err)
			}
		}
	case !errors.Is(err, fs.ErrNotExist):
		return badInput("%v", err)
	}
	if st, err := os.Stat(path); err == nil {
		limit, gc := checker.MemorySettings(st.Size(), opts)
		if os.Getenv("GOMEMLIMIT") == "" {
			debug.SetMemoryLimit(limit)
		}
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(gc)
		}
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return badInput("--cpuprofile: %v", err)
		}
		defer stop()
	}
	started := time.Now()
	res, err := checkOrStop(ctx, path, opts)
	if err != nil {
		return err
	}
	if res.Tail != nil {
		fmt.Fprintf(stdout, "%s: CUT: %s; every complete line before it was checked\n", path, res.Tail)
	}
	fmt.Fprintf(stdout, "%s (%s): %s in %s (read and checked). %s\n", path, from, res.Verdict, time.Since(started).Round(time.Millisecond), res.Reason)
	if c, ok := res.Check("lease-lock"); ok {
		if ll, ok := c.Details.(*checker.LeaseLockResult); ok {
			fmt.Fprintf(stdout, "lease-lock model: %s in all, at most %d in one search (budget %d)\n", checker.Plural(ll.Steps, "step"), ll.MostSteps, steps)
		}
	}
	for i, a := range res.Anomalies {
		if i == 10 {
			fmt.Fprintf(stdout, "  ... and %s\n", checker.Plural(len(res.Anomalies)-i, "more anomaly"))
			break
		}
		fmt.Fprintf(stdout, "  %s: %s\n", a.Kind, a.Text)
	}
	if stored, err := reports.ReadResults(filepath.Join(filepath.Dir(path), reports.ResultsFile)); err == nil {
		same := "the same as"
		if stored.Verdict != string(res.Verdict) {
			same = "DIFFERENT from"
		}
		fmt.Fprintf(stdout, "verdict %s is %s the run's stored verdict (%s)\n", res.Verdict, same, stored.Verdict)
	}
	switch res.Verdict {
	case checker.Valid:
		return nil
	case checker.Invalid:
		return exitError{exitContradicts}
	}
	return exitError{exitUnknown}
}

// checkOrStop checks the history unless ctx ends first: a signal stops
// deadbolt check at once (the process exits; a check of millions of lines
// can take a minute) with exit 130.
func checkOrStop(ctx context.Context, path string, opts checker.Options) (checker.Report, error) {
	type result struct {
		r   checker.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := checker.CheckFile(path, opts)
		done <- result{r, err}
	}()
	select {
	case <-ctx.Done():
		return checker.Report{}, errCheckInterrupted
	case res := <-done:
		if res.err != nil {
			return res.r, badInput("%v", res.err)
		}
		return res.r, nil
	}
}

var errCheckInterrupted = errors.New("check interrupted")

// startCPUProfile profiles the process into path until stop: the check's
// cost at scale is measured on the binary, not guessed from a benchmark.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
