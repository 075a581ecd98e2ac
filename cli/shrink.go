package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/explore"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// ShrunkFile is the scenario file shrink writes into the run's directory.
const ShrunkFile = "shrunk.json"

// cmdShrink searches for a smaller scenario than a run that broke its lock
// that still breaks it on three seeds (the run's and two drawn from it):
// the faults the run struck become a plan, then explore's shrinker tries
// fewer steps, clients and keys, a simpler workload, narrower targets,
// shorter faults and a shorter fault phase, within a budget of runs, and
// writes the smallest as RUN_DIR/shrunk.json. Every trial is a real run,
// stored under --store.
func cmdShrink(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("shrink", flag.ContinueOnError)
	budget, parallel := 30, 3
	fs.Func("budget", "the most trial runs, the confirmation on three seeds included (3-500, default 30)", bounded(&budget, 3, 500))
	fs.Func("parallel", fmt.Sprintf("how many trial runs at once (1-%d, default 3)", maxParallel), bounded(&parallel, 1, maxParallel))
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
	s := scenarios.AsPlan(file.Scenario, steps)
	seed := *file.Seed
	fmt.Fprintf(stderr, "shrink: %s (seed %d) struck %s; confirmed on 3 seeds, then shrunk within %s\n", s.Name, seed, checker.Plural(len(steps), "fault"), checker.Plural(budget, "trial run"))
	started := time.Now()
	sh, best, _, err := explore.Shrink(ctx, explore.ShrinkOptions{Scenario: s, Lock: s.Lock, Seed: seed, Budget: budget, Parallel: parallel, Dir: *store,
		Run: scenarios.RunOptions{Log: func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }}})
	if ctx.Err() != nil {
		return scenarios.ErrInterrupted
	}
	if err != nil {
		return err
	}
	if !sh.Confirmed {
		fmt.Fprintf(stdout, "%s: the run's faults, struck again as a plan, did not break %s on every seed %v (%s); nothing written\n", dir, s.Lock, sh.Seeds, explore.ReplayWords(sh.Replays))
		return exitError{exitUnknown}
	}
	c := best
	c.Name = s.Name + "-shrunk"
	c.Description = fmt.Sprintf("shrunk from %s seed %d (%s) in %s: %d of its %s, %s, %s; breaks %s on %d of %d seeds",
		s.Name, seed, dir, checker.Plural(sh.Runs, "run"), len(c.Fault.Steps), checker.Plural(len(steps), "fault"), c.Time, checker.Plural(c.Clients, "client"), c.Lock, len(sh.Seeds), len(sh.Seeds))
	c.Expect, c.CI = scenarios.Unsafe, false
	spec := c.Spec()
	spec.Seed = seed
	b, err := scenarios.MarshalFile(spec, "checkers", "driver")
	if err != nil {
		return err
	}
	out := filepath.Join(dir, ShrunkFile)
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d of %s, fault phase %s (was %s), %s (was %d), %s; after %s in %s\nrun it: deadbolt run --file %s\n",
		s.Name, len(c.Fault.Steps), checker.Plural(len(steps), "fault"), c.Time, file.Scenario.Time, checker.Plural(c.Clients, "client"), file.Scenario.Clients,
		explore.ReplayWords(sh.Replays), checker.Plural(sh.Runs, "trial run"), time.Since(started).Round(time.Second), reports.ShellQuote(out))
	return nil
}
