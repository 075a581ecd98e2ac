package nemesis

import (
	"context"
	"errors"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/workloads/moment"
)

// victim finds the client process a fault on clients acts on: the holder
// of key, caught at the event that shows it holds the key (an ok on) and
// held there until the fault has struck (so that a reproduction is not
// luck), by client slot unless slot is AnySlot, or else client slot's
// current process (once it has one).
func victim(ctx context.Context, env Env, slot int, key string, on history.F) (Target, error) {
	if env.Clients == nil {
		return Target{}, errors.New("this run has no client processes to fault")
	}
	if key == "" {
		id, proc, err := env.Clients.WaitClient(ctx, slot)
		return Target{Process: proc, Slot: slot, Name: processName(id)}, err
	}
	if slot != AnySlot {
		// Only that slot (a mixed fleet's old client, say) may start an
		// acquire of key until it is caught: its hold comes next, not
		// whenever contention happens to let it win.
		env.Clients.Admit(key, slot)
		defer env.Clients.Open(key)
	}
	c, err := env.Clients.Catch(ctx, moment.Moment{Key: key, On: on, Slot: slot})
	if err != nil {
		return Target{}, err
	}
	return Target{Process: c.Proc, Slot: c.Slot, Name: processName(c.Process), held: c}, nil
}
