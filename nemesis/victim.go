package nemesis

import (
	"context"
	"errors"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// victim finds the client process a fault on clients acts on: the holder
// of key, caught at the event that shows it holds the key (an ok on) and
// held there until the fault has struck (so that a reproduction is not
// luck), or else client slot's current process (once it has one).
func victim(ctx context.Context, env Env, slot int, key string, on history.F) (Target, error) {
	if env.Clients == nil {
		return Target{}, errors.New("this run has no client processes to fault")
	}
	if key == "" {
		id, proc, err := env.Clients.WaitClient(ctx, slot)
		return Target{Process: proc, Slot: slot, Name: processName(id)}, err
	}
	c, err := env.Clients.Catch(ctx, workloads.Moment{Key: key, On: on, Slot: AnySlot})
	if err != nil {
		return Target{}, err
	}
	return Target{Process: c.Proc, Slot: c.Slot, Name: processName(c.Process), held: c}, nil
}
