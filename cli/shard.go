package cli

import (
	"flag"

	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// shardFlag is --shard i/n of a command that runs a suite or a matrix: a
// slice of its runs (scenarios.ShardOf), for a CI's job matrix to spread;
// `deadbolt report --merge` joins the shards' stores.
type shardFlag struct{ i, n int }

func (s *shardFlag) register(fs *flag.FlagSet, of string) {
	fs.Func("shard", "run shard `i/n` (the i-th of n) of "+of+": the same slice on every machine, balanced by the runs' lengths; deadbolt report --merge joins the shards' stores", func(v string) error {
		var err error
		s.i, s.n, err = scenarios.ParseShard(v)
		return err
	})
}

// set: --shard was given.
func (s shardFlag) set() bool { return s.n > 0 }
