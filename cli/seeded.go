package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// maxSeeds bounds --seeds: each seed is one more run of every scenario.
const maxSeeds = 20

// seededRuns are the flags of a command that runs its scenarios once per
// seed (matrix, sweep): --seeds, --parallel and --fresh.
type seededRuns struct {
	seeds, parallel int
	fresh           bool
}

func (s *seededRuns) register(fs *flag.FlagSet) {
	s.seeds, s.parallel = 3, 3
	fs.Func("seeds", fmt.Sprintf("runs per scenario, seeds --seed, --seed+1, ... (1-%d, default 3)", maxSeeds), bounded(&s.seeds, 1, maxSeeds))
	fs.Func("parallel", fmt.Sprintf("how many runs at once (1-%d, default 3)", maxParallel), bounded(&s.parallel, 1, maxParallel))
	fs.BoolVar(&s.fresh, "fresh", false, "start every run's cluster anew instead of reusing, reset, one an earlier run of the same topology used")
}

// pool lends runs kept clusters (unless --fresh); the returned func removes
// them, on every exit path.
func (s *seededRuns) pool(ctx context.Context, runs []scenarios.Scenario, o *scenarios.RunOptions) (func(), error) {
	if s.fresh {
		return func() {}, nil
	}
	pool, err := newPool(runs, *o)
	if err != nil {
		return nil, err
	}
	o.Pool = pool
	return func() { pool.Close(context.WithoutCancel(ctx)) }, nil
}
