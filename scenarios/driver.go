package scenarios

import (
	"fmt"
	"sync"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/drivers"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// probed keeps each shipped driver's hello once read: a suite asks for it
// once per scenario and again when the scenario runs.
var probed struct {
	mu    sync.Mutex
	hello map[string]locks.Declared
}

// withDriver returns o with the scenario's own driver (Scenario.Driver)
// when o names none: its command, and its locks from its hello, read
// before anything starts. A driver given in o (--driver) runs instead.
func (s Scenario) withDriver(o RunOptions) (RunOptions, error) {
	if o.Driver.Path != "" || s.Driver == "" {
		return o, nil
	}
	d, err := drivers.Get(s.Driver)
	if err != nil {
		return o, err
	}
	cmd, err := d.Command()
	if err != nil {
		return o, fmt.Errorf("scenario %s runs its clients with a shipped driver: %w", s.Name, err)
	}
	probed.mu.Lock()
	defer probed.mu.Unlock()
	key := cmd.String()
	hello, ok := probed.hello[key]
	if !ok {
		if hello, err = client.Probe(cmd); err != nil {
			return o, fmt.Errorf("scenario %s runs its clients with driver %s, which needs %s: %w", s.Name, d.Name, d.Needs, err)
		}
		if probed.hello == nil {
			probed.hello = map[string]locks.Declared{}
		}
		probed.hello[key] = hello
	}
	o.Driver, o.Locks = cmd, hello
	return o, nil
}
