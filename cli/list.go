package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/drivers"
	"github.com/deadbolt-lab/deadbolt/locks"
	_ "github.com/deadbolt-lab/deadbolt/locks/all"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/scenarios"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

func cmdList(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("list takes no arguments, got %q", pos)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, name := range scenarios.Names() {
		s, _ := scenarios.Get(name)
		ci := ""
		if s.CI {
			ci = " [ci]"
		}
		fmt.Fprintf(tw, "%s\t%s%s\t%s\n", s.Name, s.Expect, ci, s.Description)
	}
	return tw.Flush()
}

func cmdLocks(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("locks", flag.ContinueOnError)
	driver := fs.String("driver", "", "list the locks this driver's hello offers instead of deadbolt's own")
	options := fs.String("options", "", "list the knobs of this lock (a library's settings, with their defaults: --lock-option sets them) and what it does at its defaults")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("locks takes no arguments, got %q", pos)
	}
	if *options != "" {
		return listKnobs(ctx, stdout, *options, *driver)
	}
	cat := locks.Registry
	if *driver != "" {
		d, err := probeDriver(*driver)
		if err != nil {
			return err
		}
		cat = d.locks
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, name := range cat.Names() {
		fmt.Fprintf(tw, "%s\t%s\n", name, cat.Summary(name))
	}
	if err := tw.Flush(); err != nil || *driver != "" {
		return err
	}
	// The libraries deadbolt runs at any version: --lock NAME@VERSION
	// builds (or sets up) a driver on first use.
	fmt.Fprintln(stdout, "\nlibraries at a version (--lock NAME@VERSION; a driver is built on first use):")
	tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, n := range drivers.LibraryNames() {
		l, _ := drivers.GetLibrary(n)
		fmt.Fprintf(tw, "%s@VERSION\t%s\n\tknown to build: %s\n\tbugs: %s\n", n, l.Summary, strings.Join(l.Known, ", "), l.Upstream)
	}
	return tw.Flush()
}

// listKnobs prints the knobs of lock (one of deadbolt's own, a library at
// a version, or a lock of --driver) and what it does at its defaults.
func listKnobs(ctx context.Context, stdout io.Writer, lock, driver string) error {
	var cat locks.Catalogue = locks.Registry
	switch {
	case driver != "":
		d, err := probeDriver(driver)
		if err != nil {
			return err
		}
		cmd := d.cmd
		if cat, err = client.ProbeLock(cmd, &client.Configured{Lock: lock}); err != nil {
			return badInput("--options %s: %v", lock, err)
		}
	case drivers.IsVersioned(lock):
		cmd, err := drivers.Build(ctx, lock, func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) })
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return badInput("--options: %v", err)
		}
		if cat, err = client.ProbeLock(cmd, &client.Configured{Lock: lock}); err != nil {
			return badInput("--options %s: %v", lock, err)
		}
	}
	if err := cat.Lookup(lock); err != nil {
		return badInput("--options: %v", err)
	}
	ks, b := cat.Knobs(lock), cat.Behaviour(lock)
	fmt.Fprintf(stdout, "%s: %s\n", lock, behaviourText(b))
	if len(ks) == 0 {
		_, err := fmt.Fprintf(stdout, "%s takes no options (knobs); a scenario's lock_options (timeout_ms, retries, retry_delay_ms, wait_ms) set deadbolt's own locks\n", lock)
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "KNOB\tKIND\tDEFAULT\tALSO SET BY\tWHAT IT IS\n")
	for _, k := range ks {
		kind := k.Kind
		if k.Kind == locks.KnobChoice {
			kind = strings.Join(k.Choices, "|")
		}
		if k.Nullable {
			kind += "|none"
		}
		from := "-"
		if k.From != "" {
			from = "lock_options." + k.From
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.Name, kind, k.Default, from, k.Summary)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "set one with --lock-option KNOB=VALUE (run, scenario, matrix, audit, explore), or in a scenario file's lock_options.library\n")
	return err
}

// behaviourText says what a lock does as configured, in a line.
func behaviourText(b locks.Behaviour) string {
	var parts []string
	if b.Client != "" {
		parts = append(parts, "over "+b.Client)
	}
	switch {
	case b.CallTimeoutMS < 0:
		parts = append(parts, "waits for a reply for ever")
	case b.CallTimeoutMS > 0:
		parts = append(parts, "waits "+b.CallTimeout().String()+" for a reply")
	}
	switch {
	case b.Resends && b.Retries < 0:
		parts = append(parts, "sends a failed or timed-out command again for as long as the call lasts")
	case b.Resends:
		parts = append(parts, fmt.Sprintf("sends a failed or timed-out command up to %d more times", b.Retries))
	case b.Retries != 0:
		parts = append(parts, "sends a command that failed on the connection again, never a timed-out one")
	default:
		parts = append(parts, "sends each command once")
	}
	if b.RenewEveryMS > 0 {
		parts = append(parts, fmt.Sprintf("renews a held lease every %s", time.Duration(b.RenewEveryMS)*time.Millisecond))
	}
	if d, ok := b.LongestCall(); ok {
		parts = append(parts, "a call may take up to "+d.String())
	} else if b.LongestCallMS < 0 {
		parts = append(parts, "nothing bounds how long a call may take")
	}
	s := strings.Join(parts, "; ")
	if len(b.Settings) > 0 {
		s += " (set: " + strings.Join(b.Settings, " ") + ")"
	}
	return s
}

func cmdWorkloads(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("workloads", flag.ContinueOnError)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("workloads takes no arguments, got %q", pos)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, name := range workloads.Names() {
		k, _ := workloads.Get(name)
		fmt.Fprintf(tw, "%s\t%s\n", name, k.Summary)
	}
	return tw.Flush()
}

func cmdFaults(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("faults", flag.ContinueOnError)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("faults takes no arguments, got %q", pos)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "FAULT\tDEFAULT TARGET\tWHAT IT DOES\n")
	for _, name := range nemesis.Faults() {
		summary, target := nemesis.FaultSummary(name)
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, target, summary)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "\ntargets: %s\n", nemesis.SelectorHelp)
	return err
}
