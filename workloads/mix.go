package workloads

import (
	"fmt"
	"maps"

	"github.com/deadbolt-lab/deadbolt/client"
)

// Mixed is a lock some of a run's clients open instead of Config.Lock,
// each through its own driver: the old fleet beside the new one in a
// rolling upgrade, or two libraries on one key. Its clients are the last
// slots, in the order Config.Mix gives.
type Mixed struct {
	Lock    string
	Driver  client.Command
	Clients int
}

// lockOf is the lock client slot opens and the driver it runs.
func (c Config) lockOf(slot int) (string, client.Command) {
	first := c.Clients
	for _, m := range c.Mix {
		first -= m.Clients
	}
	for _, m := range c.Mix {
		if slot >= first && slot < first+m.Clients {
			return m.Lock, m.Driver
		}
		first += m.Clients
	}
	return c.Lock, c.Driver
}

// noteMixed records that history process id opened lock, when it is a
// mixed one.
func (r *Runner) noteMixed(id int, lock string) {
	if lock == r.cfg.Lock {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mixedBy == nil {
		r.mixedBy = map[int]string{}
	}
	r.mixedBy[id] = lock
}

// Mixed is the lock each history process of a mixed lock opened, so that
// a report can say which of the fleet did what.
func (r *Runner) Mixed() map[int]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.mixedBy)
}

// validateMix: every mixed lock has clients, and Lock keeps at least one.
func (c Config) validateMix() error {
	n := 0
	for _, m := range c.Mix {
		if m.Clients < 1 || m.Lock == "" {
			return fmt.Errorf("a lock mixed into the run needs a name and at least one client, got %q with %d", m.Lock, m.Clients)
		}
		n += m.Clients
	}
	if len(c.Mix) > 0 && n >= c.Clients {
		return fmt.Errorf("the mixed locks take %d of %d clients: %s needs at least one of its own", n, c.Clients, c.Lock)
	}
	return nil
}
