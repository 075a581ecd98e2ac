package scenarios

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/drivers"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// probed keeps each driver's hello once read: a suite asks for it once
// per scenario and again when the scenario runs.
var probed struct {
	mu    sync.Mutex
	hello map[string]locks.Declared
}

// hello is the driver's hello, read once per process.
func hello(cmd client.Command) (locks.Declared, error) {
	probed.mu.Lock()
	defer probed.mu.Unlock()
	key := strings.Join(append(slices.Clone(cmd.Env), cmd.String()), " ") // one interpreter, other libraries: the env tells
	if h, ok := probed.hello[key]; ok {
		return h, nil
	}
	h, err := client.Probe(cmd)
	if err != nil {
		return h, err
	}
	if probed.hello == nil {
		probed.hello = map[string]locks.Declared{}
	}
	probed.hello[key] = h
	return h, nil
}

// withDriver returns o with the driver its lock needs when o names none
// (--driver runs instead): a lock named NAME@VERSION runs the driver
// built for that library at that version (withLibrary); otherwise the
// scenario's own driver (Scenario.Driver) runs, if it has one. The
// driver's locks come from its hello, read before anything starts.
func (s Scenario) withDriver(o RunOptions) (RunOptions, error) {
	if o.Driver.Path != "" {
		return o, nil
	}
	if drivers.IsVersioned(s.Lock) {
		return withLibrary(o, s.Lock)
	}
	if s.Driver == "" {
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
	h, err := hello(cmd)
	if err != nil {
		return o, fmt.Errorf("scenario %s runs its clients with driver %s, which needs %s: %w", s.Name, d.Name, d.Needs, err)
	}
	o.Driver, o.Locks = cmd, h
	return o, nil
}

// withLibrary returns o with the driver of lock, a library at a version
// (package drivers), built on first use: its hello must offer that very
// lock, or the build ran another version than the one asked for.
func withLibrary(o RunOptions, lock string) (RunOptions, error) {
	cmd, err := drivers.Build(context.Background(), lock, o.Log)
	if err != nil {
		return o, err
	}
	h, err := hello(cmd)
	if err != nil {
		return o, fmt.Errorf("the driver built for %s: %w", lock, err)
	}
	if h.Lookup(lock) != nil {
		return o, fmt.Errorf("the driver built for %s offers %v: it runs another version than the one asked for", lock, h.Names())
	}
	o.Driver, o.Locks = cmd, h
	return o, nil
}

// Catalogue is what declares the scenario's lock for a run with o: the
// hello of the driver that runs it (o's own, the one built for a library
// at a version, the scenario's shipped driver), or deadbolt's own locks.
func (s Scenario) Catalogue(o RunOptions) (locks.Catalogue, error) {
	o, err := s.withDriver(o)
	if err != nil {
		return nil, err
	}
	return o.catalogue(), nil
}
