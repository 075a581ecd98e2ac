package main

import (
	"flag"
	"io"
)

// parse parses flags wherever they stand among the positional arguments
// ("run NAME --seed 3" as well as "run --seed 3 NAME").
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, badInput("%s: %v", fs.Name(), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
