package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/client/conformance"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// cmdConformance checks a driver against docs/driver-protocol.md on a real
// Redis node, one rule a line: exit 0 when every rule holds, 1 when one
// does not (each failure with what was expected and what came).
func cmdConformance(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("conformance", flag.ContinueOnError)
	driver := fs.String("driver", "", "command line of the driver to check (required; split as a shell splits words)")
	lock := fs.String("lock", "", "the single-master lock to check it with (default: simple, when the driver offers it)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("conformance takes no arguments, got %q", pos)
	}
	if *driver == "" {
		return badInput("conformance needs --driver CMD")
	}
	d, err := probeDriver(*driver)
	if err != nil {
		return err
	}
	switch {
	case *lock == "" && slices.Contains(d.locks.Locks, "simple"):
		*lock = "simple"
	case *lock == "":
		return badInput("driver %s offers no lock named simple; choose one of %s with --lock", d.cmd, strings.Join(d.locks.Names(), ", "))
	}
	if err := d.locks.Fits(*lock, 1); err != nil {
		return badInput("%v", err)
	}
	c, err := cluster.Start(ctx, conformance.Spec)
	if err != nil {
		if ctx.Err() != nil {
			return scenarios.ErrInterrupted
		}
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	rec := conformance.NewRecorder("conformance")
	done := make(chan struct{})
	go func() {
		defer close(done)
		conformance.Run(rec, c, d.cmd, *lock)
		rec.Finish()
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return scenarios.ErrInterrupted // the drivers die with this process
	}
	failed := 0
	for _, s := range *rec.Steps {
		mark := "ok  "
		if !s.Passed {
			mark = "FAIL"
			failed++
		}
		fmt.Fprintf(stdout, "%s %s\n", mark, s.Name)
		for _, e := range s.Errors {
			if !strings.HasSuffix(e, " failed") {
				fmt.Fprintf(stdout, "     %s\n", strings.ReplaceAll(e, "\n", "\n     "))
			}
		}
		if !s.Passed {
			for _, l := range s.Logs {
				fmt.Fprintf(stdout, "     %s\n", strings.ReplaceAll(l, "\n", "\n     "))
			}
		}
	}
	if failed > 0 {
		fmt.Fprintf(stdout, "\ndriver %s with lock %s: %d of %s failed (docs/driver-protocol.md says what each expects)\n", d.cmd, *lock, failed, checker.Plural(len(*rec.Steps), "rule"))
		return exitError{exitContradicts}
	}
	fmt.Fprintf(stdout, "\ndriver %s with lock %s: every one of %s holds\n", d.cmd, *lock, checker.Plural(len(*rec.Steps), "rule"))
	return nil
}
