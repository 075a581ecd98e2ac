package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/explore"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// cmdExplore is `deadbolt explore --lock L [--against L2]`: scenarios
// generated from what the lock declares, each run and judged, what breaks
// the lock shrunk to a small scenario file with a draft write-up. It exits
// 1 when it made a finding, 0 when none, 2 when too many runs reached no
// verdict to say, 254 for bad input before anything starts.
func cmdExplore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	var f runFlags
	f.register(fs, false)
	lock := fs.String("lock", "", "the lock to explore (see: deadbolt locks; NAME@VERSION builds a library at a version)")
	against := fs.String("against", "", "a second lock every generated scenario runs on too; what breaks one and not the other is kept (the lock explored again, with --against-option, tells two settings of it apart)")
	var againstKnobs map[string]string
	fs.Func("against-option", "KNOB=VALUE: a setting of --against's library, as --lock-option is of --lock's, repeatable", lockOptions(&againstKnobs))
	o := explore.Options{Runs: 40, Parallel: 4, Shrink: 3, ShrinkRuns: 40}
	fs.Func("runs", fmt.Sprintf("how many scenarios to generate and run, each on both locks with --against (1-%d, default 40): the budget is runs, never time", explore.MaxRuns), bounded(&o.Runs, 1, explore.MaxRuns))
	fs.Func("parallel", fmt.Sprintf("how many runs at once (1-%d, default 4)", explore.MaxParallel), bounded(&o.Parallel, 1, explore.MaxParallel))
	fs.Func("shrink", "how many findings to shrink, the first of each kind (0-20, default 3)", bounded(&o.Shrink, 0, 20))
	fs.Func("shrink-runs", "the most runs shrinking one finding takes, its confirmation on 3 seeds included (3-500, default 40)", bounded(&o.ShrinkRuns, 3, 500))
	verbose := fs.Bool("verbose", false, "print every run's own progress lines too, not only the exploration's line a run")
	names, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(names) > 0:
		return badInput("explore takes no scenario names (got %q): it generates its scenarios from --lock", names)
	case *lock == "":
		return badInput("explore needs --lock (see: deadbolt locks)")
	}
	// --lock-option is the explored lock's knobs alone: the second lock
	// has its own (--against-option).
	o.LockKnobs, o.AgainstKnobs = f.lockOptions, againstKnobs
	f.lockOptions = nil
	ro := f.options(ctx, stderr)
	if err := f.probe(&ro); err != nil {
		return err
	}
	parallelSet := false
	fs.Visit(func(fl *flag.Flag) { parallelSet = parallelSet || fl.Name == "parallel" })
	if ro.Target != nil && !parallelSet {
		o.Parallel = 1 // runs against one deployment share its nodes
	}
	o.Lock, o.Against, o.Seed, o.Run = *lock, *against, ro.Seed, ro
	// A line a run and a candidate, not every run's own lines (--verbose).
	o.Log = ro.Log
	if !*verbose {
		o.Run.Log = nil
	}
	if !f.seedSet {
		fmt.Fprintf(stderr, "explore: seed %d (give --seed %d to draw the same scenarios again)\n", o.Seed, o.Seed)
	}
	o.Dir = filepath.Join(f.store, "explore", fmt.Sprintf("%s-%d-%s", explore.FileSafe(explore.Label(o.Lock, o.LockKnobs)), o.Seed, time.Now().UTC().Format("20060102T150405Z")))
	e, err := explore.New(o)
	if err != nil {
		return badInput("%v", err)
	}
	if err := f.checkServer(ctx); err != nil {
		return err
	}
	if err := checkStore(f.store); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "explore: %s generated for %s%s; runs and reports in %s\n", checker.Plural(len(e.Generated()), "scenario"), explore.Label(o.Lock, o.LockKnobs), againstNote(explore.Label(o.Against, o.AgainstKnobs)), o.Dir)
	rep, err := e.Run(ctx)
	if ctx.Err() != nil {
		return scenarios.ErrInterrupted
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, explore.Summary(rep)+".")
	for i, fd := range rep.Findings {
		fmt.Fprintf(stdout, "\nfinding %d: %s breaks %s", i+1, fd.Anomaly, fd.Lock)
		if fd.Against != "" {
			fmt.Fprintf(stdout, ", not %s", fd.Against)
		}
		fmt.Fprintf(stdout, " (run %d: %s at %s)\n", fd.Scenario, fd.Aim.Fault, callOf(fd.Aim.Call))
		if fd.Shrink != nil && fd.Shrink.Confirmed {
			if fd.Shrink.Amplified != "" {
				fmt.Fprintf(stdout, "  broke it on every seed with %s\n", fd.Shrink.Amplified)
			}
			fmt.Fprintf(stdout, "  shrunk in %s: %s\n", checker.Plural(fd.Shrink.Runs, "run"), explore.ReplayWords(fd.Shrink.Replays))
		} else if fd.Shrink != nil {
			fmt.Fprintf(stdout, "  not confirmed on %d seeds: %s\n", len(fd.Shrink.Seeds), explore.ReplayWords(fd.Shrink.Replays))
		}
		fmt.Fprintf(stdout, "  replay: %s\n", fd.Replay)
		if fd.Writeup != "" {
			fmt.Fprintf(stdout, "  write-up: %s\n", fd.Writeup)
		}
	}
	fmt.Fprintf(stdout, "\nreport: %s (and %s, %s beside it)\n", filepath.Join(rep.Dir, explore.HTMLFile), explore.MarkdownFile, explore.JSONFile)
	switch {
	case len(rep.Findings) > 0:
		return exitError{exitContradicts}
	case rep.Undecided:
		return exitError{exitUnknown}
	}
	return nil
}

func againstNote(against string) string {
	if against == "" {
		return ""
	}
	return ", each run on " + against + " too"
}

func callOf(call string) string {
	if call == "" {
		return "random moments"
	}
	return call
}
