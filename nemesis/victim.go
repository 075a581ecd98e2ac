package nemesis

import (
	"context"
	"errors"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/history"
)

// victim finds the client process a fault on clients acts on: the holder
// of key, the moment the workload shows it holds the key by an ok on (so
// that a reproduction is not luck), or else client slot's current
// process. It returns the history process id and the OS process.
func victim(ctx context.Context, env Env, slot int, key string, on history.F) (int, *client.Process, error) {
	if env.Clients == nil {
		return 0, nil, errors.New("this run has no client processes to fault")
	}
	if key == "" {
		return env.Clients.Client(slot)
	}
	if on == "" {
		on = history.Acquire
	}
	for {
		holds, cancel := env.Rec.Watch(func(op history.Op) bool {
			return op.F == on && op.Type == history.OK && op.Key == key && op.Process >= 0
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
