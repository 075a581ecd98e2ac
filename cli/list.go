package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

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

func cmdLocks(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("locks", flag.ContinueOnError)
	driver := fs.String("driver", "", "list the locks this driver's hello offers instead of deadbolt's own")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("locks takes no arguments, got %q", pos)
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
