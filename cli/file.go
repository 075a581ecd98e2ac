package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// fromFile reads `run --file`'s scenario and fills o from what the file
// records of a run: its seed unless --seed is given, the driver command
// that ran its clients unless --driver is given. A run that went against a
// deployment replays only against one (--target). Any bad field is bad
// input, before anything starts.
func fromFile(ctx context.Context, path string, f *runFlags, o *scenarios.RunOptions, stderr io.Writer) (scenarios.Scenario, error) {
	file, err := scenarios.ReadFile(path)
	if err != nil {
		return scenarios.Scenario{}, badInput("--file %v", err)
	}
	// An image the file names must be one deadbolt built, unless it is the
	// one this deadbolt runs anyway (DEADBOLT_REDIS_IMAGE's, the default).
	if img := file.Scenario.Cluster.Image; img != "" && img != cluster.Image() && f.server == "" {
		if err := cluster.CheckBuilt(ctx, img); err != nil {
			return file.Scenario, badInput("--file %s: cluster.image: %v", path, err)
		}
	}
	if file.Seed != nil && !f.seedSet {
		o.Seed = *file.Seed
		fmt.Fprintf(stderr, "%s: the file's seed %d (--seed replaces it)\n", path, o.Seed)
	}
	if file.Driver != nil && f.driver == "" {
		// A scenario file is data: it travels (findings filed upstream,
		// stored runs replayed by others), and running it must never run
		// a command the person did not name. Its driver runs only when
		// the command line names one.
		cmd := reports.ShellJoin(file.Driver)
		return file.Scenario, badInput("--file %s: driver: the file's clients run the command %s, and deadbolt runs no command a file names: "+
			"to run it, name it yourself (--driver %s), or give --driver your own; a shipped driver is named by driver_name, and a library at a version by its lock (NAME@VERSION)",
			path, cmd, reports.ShellQuote(cmd))
	}
	if file.Target && o.Target == nil {
		return file.Scenario, badInput("--file %s: target: the run went against an existing deployment; give --target FILE to run it against one", path)
	}
	return file.Scenario, nil
}
