package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// ShrunkFile is the scenario file shrink writes into the run's directory.
const ShrunkFile = "shrunk.json"

// cmdShrink searches for a smaller scenario than a run that broke its lock
// (fewer faults, a shorter fault phase, fewer clients) that still breaks
// it with the run's seed, and writes it as RUN_DIR/shrunk.json. Every trial
// is a real run, stored under --store.
func cmdShrink(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("shrink", flag.ContinueOnError)
	budget := 12
	fs.Func("budget", "the most trial runs (1-100, default 12)", func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			return fmt.Errorf("must be from 1 to 100, got %q", s)
		}
		budget = n
		return nil
	})
	store := fs.String("store", "store", "directory for the trial runs")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return badInput("shrink takes one run directory, got %d arguments", len(rest))
	}
	dir := rest[0]
	file, err := scenarios.ReadFile(filepath.Join(dir, scenarios.SpecFile))
	if err != nil {
		return badInput("shrink %s: %v", dir, err)
	}
	if file.Seed == nil || file.Target || file.Driver != nil {
		return badInput("shrink %s: only a stored run of deadbolt's own clients on its own containers can be shrunk (a seed, no --target, no --driver)", dir)
	}
	res, err := reports.ReadResults(filepath.Join(dir, reports.ResultsFile))
	if err != nil {
		return badInput("shrink %s: %v", dir, err)
	}
	if res.Verdict != "invalid" {
		return badInput("shrink %s: the run's verdict is %s: only a run that broke its lock (invalid) has something to shrink", dir, res.Verdict)
	}
	ops, err := history.ReadFile(filepath.Join(dir, scenarios.HistoryFile))
	if err != nil {
		return badInput("shrink %s: %v", dir, err)
	}
	steps, err := scenarios.PlanOf(ops)
	if err != nil {
		return badInput("shrink %s: %v", dir, err)
	}
	if err := checkStore(*store); err != nil {
		return err
	}
	s := file.Scenario
	seed := *file.Seed
	fmt.Fprintf(stderr, "shrink: %s (seed %d) struck %s; at most %s\n", s.Name, seed, checker.Plural(len(steps), "fault"), checker.Plural(budget, "trial run"))
	o := scenarios.RunOptions{Seed: seed, Store: *store}
	trial := func(ctx context.Context, c scenarios.Scenario) (bool, error) {
		r, err := c.Run(ctx, o)
		if err != nil {
			return false, err
		}
		return r.Verdict == "invalid", nil
	}
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "shrink: "+format+"\n", args...) }
	started := time.Now()
	got, err := scenarios.Shrink(ctx, s, steps, budget, trial, logf)
	if ctx.Err() != nil {
		return scenarios.ErrInterrupted
	}
	if errors.Is(err, scenarios.ErrNotReproduced) {
		fmt.Fprintf(stdout, "%s: %v; nothing written\n", dir, err)
		return exitError{exitUnknown}
	}
	if err != nil {
		return err
	}
	c := got.Scenario
	c.Name = s.Name + "-shrunk"
	c.Description = fmt.Sprintf("shrunk from %s seed %d (%s): %d of its %s, %s, %s, still breaks %s with seed %d",
		s.Name, seed, dir, len(c.Fault.Steps), checker.Plural(len(steps), "fault"), c.Time, checker.Plural(c.Clients, "client"), c.Lock, seed)
	c.Expect, c.CI = scenarios.Unsafe, false
	spec := c.Spec()
	spec.Seed = seed
	b, err := scenarios.MarshalFile(spec)
	if err != nil {
		return err
	}
	out := filepath.Join(dir, ShrunkFile)
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d of %s, fault phase %s (was %s), %s (was %d), after %s in %s\nrun it: deadbolt run --file %s\n",
		s.Name, len(c.Fault.Steps), checker.Plural(len(steps), "fault"), c.Time, s.Time, checker.Plural(c.Clients, "client"), s.Clients,
		checker.Plural(got.Runs, "trial run"), time.Since(started).Round(time.Second), reports.ShellQuote(out))
	return nil
}
