package nemesis

import (
	"context"
	"errors"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/history"
)

// victim finds the client process a fault on clients acts on: the holder
// of p.Key, the moment the workload shows it holds the key (so that a
// reproduction is not luck), or else client slot p.Client's current
// process. It returns the history process id and the OS process.
func victim(ctx context.Context, env Env, p Params) (int, *client.Process, error) {
	if env.Clients == nil {
		return 0, nil, errors.New("this run has no client processes to fault")
	}
	if p.Key == "" {
		return env.Clients.Client(p.Client)
	}
	on := p.On
	if on == "" {
		on = history.Acquire
	}
	for {
		holds, cancel := env.Rec.Watch(func(op history.Op) bool {
			return op.F == on && op.Type == history.OK && op.Key == p.Key && op.Process >= 0
		})
		select {
		case op := <-holds:
			cancel()
			// A process replaced in the meantime is no longer a victim.
			if proc := env.Clients.Process(op.Process); proc != nil {
				return op.Process, proc, nil
			}
		case <-ctx.Done():
			cancel()
			return 0, nil, ctx.Err()
		}
	}
}
