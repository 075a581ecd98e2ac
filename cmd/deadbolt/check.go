package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

func cmdCheck(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	pos, err := parse(fs, args)
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
	ops, err := history.ReadFile(path)
	if err != nil {
		return badInput("%v", err)
	}
	res := checker.Check(ops, checker.Options{LinearizabilityTimeout: checker.DefaultLinearizabilityTimeout, MinAcquires: 10})
	fmt.Fprintf(stdout, "%s: %s. %s\n", path, res.Verdict, res.Reason)
	for i, a := range res.Anomalies {
		if i == 10 {
			fmt.Fprintf(stdout, "  ... and %d more anomalies\n", len(res.Anomalies)-i)
			break
		}
		fmt.Fprintf(stdout, "  %s\n", a)
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
