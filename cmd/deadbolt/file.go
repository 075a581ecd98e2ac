package main

import (
	"fmt"
	"io"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// fromFile reads `run --file`'s scenario and fills o from what the file
// records of a run: its seed unless --seed is given, the driver command
// that ran its clients unless --driver is given. A run that went against a
// deployment replays only against one (--target). Any bad field is bad
// input, before anything starts.
func fromFile(path string, f *runFlags, o *scenarios.RunOptions, stderr io.Writer) (scenarios.Scenario, error) {
	file, err := scenarios.ReadFile(path)
	if err != nil {
		return scenarios.Scenario{}, badInput("--file %v", err)
	}
	if file.Seed != nil && !f.seedSet {
		o.Seed = *file.Seed
		fmt.Fprintf(stderr, "%s: the file's seed %d (--seed replaces it)\n", path, o.Seed)
	}
	if file.Driver != nil && f.driver == "" {
		cmd := client.Command{Path: file.Driver[0], Args: file.Driver[1:]}
		ls, err := client.Probe(cmd)
		if err != nil {
			return file.Scenario, badInput("--file %s: driver: the recorded driver %s does not start (--driver replaces it): %v", path, cmd, err)
		}
		o.Driver, o.Locks = cmd, ls
	}
	if file.Target && o.Target == nil {
		return file.Scenario, badInput("--file %s: target: the run went against an existing deployment; give --target FILE to run it against one", path)
	}
	return file.Scenario, nil
}
