package cli

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/deadbolt-lab/deadbolt/reports"
)

// stdin is where bench reads when given no files; tests replace it.
var stdin io.Reader = os.Stdin

// cmdBench prints the benchmark tables from `go test -bench` output
// (stdin, or the files named): the locks' cycles beside the ceiling, and
// the checker at scale, each with its targets. It exits 1 when the output
// reports a failed benchmark, or with --strict when a target was missed;
// 254 when there is no benchmark result to read.
func cmdBench(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	strict := fs.Bool("strict", false, "exit 1 when a performance target is missed")
	files, err := parse(fs, args)
	if err != nil {
		return err
	}
	var in []io.Reader
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return badInput("bench: %v", err)
		}
		defer f.Close()
		in = append(in, f)
	}
	if len(in) == 0 {
		in = []io.Reader{stdin}
	}
	t, err := reports.ParseBench(io.MultiReader(in...))
	if err != nil {
		return badInput("bench: %v", err)
	}
	if len(t.Results) == 0 && len(t.Failures) == 0 {
		return badInput("bench: no benchmark results in the input (pipe `go test -bench` output in)")
	}
	if err := t.Write(stdout); err != nil {
		return err
	}
	if len(t.Failures) > 0 {
		return exitError{exitContradicts}
	}
	if *strict {
		for _, g := range t.Targets() {
			if !g.Met {
				fmt.Fprintf(stdout, "--strict: target %q not met\n", g.Goal)
				return exitError{exitContradicts}
			}
		}
	}
	return nil
}
