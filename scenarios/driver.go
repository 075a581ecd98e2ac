package scenarios

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/drivers"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// probed keeps each driver's hello once read, with its lock as a run
// configures it: a suite asks for it once per scenario and again when the
// scenario runs.
var probed struct {
	mu    sync.Mutex
	hello map[string]locks.Declared
}

// hello is the driver's hello, and its lock's declaration as the
// scenario's lock options configure it (client.ProbeLock), read once per
// process.
func (s Scenario) hello(cmd client.Command) (locks.Declared, error) {
	var lock *client.Configured
	if s.Lock != "" {
		lock = &client.Configured{Lock: s.Lock, TTLMS: s.TTL.D().Milliseconds(), Options: s.LockOptions}
	}
	b, _ := json.Marshal(lock)
	probed.mu.Lock()
	defer probed.mu.Unlock()
	// One interpreter, other libraries: the env tells; one lock, other
	// options: the configured lock tells.
	key := strings.Join(append(slices.Clone(cmd.Env), cmd.String(), string(b)), " ")
	if h, ok := probed.hello[key]; ok {
		return h, nil
	}
	h, err := client.ProbeLock(cmd, lock)
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
		return s.withLibrary(o)
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
	h, err := s.hello(cmd)
	if err != nil {
		return o, fmt.Errorf("scenario %s runs its clients with driver %s, which needs %s: %w", s.Name, d.Name, d.Needs, err)
	}
	o.Driver, o.Locks = cmd, h
	return o, nil
}

// withLibrary returns o with the driver of the scenario's lock, a library
// at a version (package drivers), built on first use: its hello must offer
// that very lock, or the build ran another version than the one asked for.
func (s Scenario) withLibrary(o RunOptions) (RunOptions, error) {
	return withLibrary(o, s.Lock, s.hello)
}

// withLibrary is the driver built for lock, with its hello read by hello.
func withLibrary(o RunOptions, lock string, hello func(client.Command) (locks.Declared, error)) (RunOptions, error) {
	s := Scenario{Lock: lock}
	cmd, err := drivers.Build(o.ctx(), s.Lock, o.Log)
	if err != nil {
		if o.ctx().Err() != nil {
			return o, ErrInterrupted
		}
		return o, err
	}
	h, err := hello(cmd)
	if err != nil {
		if h.Lookup(s.Lock) == nil {
			return o, err // the lock refused its options
		}
		return o, fmt.Errorf("the driver built for %s: %w", s.Lock, err)
	}
	if h.Lookup(s.Lock) != nil {
		return o, fmt.Errorf("the driver built for %s offers %v: it runs another version than the one asked for", s.Lock, h.Names())
	}
	o.Driver, o.Locks = cmd, h
	return o, nil
}

// helloOnly is the driver's hello alone, its locks at their defaults (a
// lock mixed in, a matrix's row checked before its cells are drawn).
func helloOnly(cmd client.Command) (locks.Declared, error) {
	return Scenario{}.hello(cmd)
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
