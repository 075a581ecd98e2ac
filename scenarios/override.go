package scenarios

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// Override changes one thing of the scenario for one run (a command line's
// option, dbtest's lock): a function on the spec, so that a new knob is
// a field of Scenario and, where a run may change it, one Override.
type Override func(*Scenario) error

// SetTime sets the fault phase's length.
func SetTime(d time.Duration) Override {
	return func(s *Scenario) error { s.Time = Duration(d); return nil }
}

// SetClients sets how many clients run.
func SetClients(n int) Override {
	return func(s *Scenario) error {
		if n < 1 {
			return fmt.Errorf("--clients must be at least 1, got %d", n)
		}
		s.Clients = n
		return nil
	}
}

// SetLock runs another lock, expecting what the known-results table knows
// of it there: the expectation belongs to the failure and the lock together.
func SetLock(lock string) Override {
	return func(s *Scenario) error {
		if lock != s.Lock {
			s.Lock, s.Expect = lock, Expected(s.Name, lock)
		}
		return nil
	}
}

// SetMix replaces the locks mixed in (mix.go). Another fleet is another
// experiment: nobody has judged it.
func SetMix(mix []LockMix) Override {
	return func(s *Scenario) error {
		if !slices.Equal(mix, s.Mix) {
			s.Mix, s.Expect = mix, Unknown
		}
		return nil
	}
}

// SetLockOptions sets knobs of the lock's library, over the scenario's
// own (lock_options.library). The lock set up otherwise than the
// known-results table judged it is another experiment: nobody has judged
// it.
func SetLockOptions(knobs map[string]string) Override {
	return func(s *Scenario) error {
		lib := maps.Clone(s.LockOptions.Library)
		if lib == nil {
			lib = map[string]string{}
		}
		maps.Copy(lib, knobs)
		if !maps.Equal(lib, s.LockOptions.Library) {
			s.LockOptions.Library, s.Expect = lib, Unknown
		}
		return nil
	}
}

// SetWorkload runs another workload.
func SetWorkload(name string) Override {
	return func(s *Scenario) error { s.Workload = name; return nil }
}

// SetExpect states the verdict the caller expects (dbtest's, for a lock
// it knows); "" keeps the scenario's.
func SetExpect(e Expectation) Override {
	return func(s *Scenario) error {
		if e == "" {
			return nil
		}
		if e != Safe && e != Unsafe {
			return fmt.Errorf("unknown expectation %q (known: %s, %s)", e, Safe, Unsafe)
		}
		s.Expect = e
		return nil
	}
}

// SetNemesis replaces the scenario's schedule with the named one at its
// defaults; faults are what the random schedule draws from, and need a
// nemesis named with them.
func SetNemesis(name string, faults []string) Override {
	return func(s *Scenario) error {
		if name == "" {
			if len(faults) > 0 {
				return fmt.Errorf("--faults chooses what --nemesis random draws from; give --nemesis random too")
			}
			return nil
		}
		s.Nemesis, s.Fault = name, nemesis.Params{Faults: faults}
		return nil
	}
}

// SetMinReplicasToWrite sets the masters' min-replicas-to-write (0: off).
func SetMinReplicasToWrite(n int) Override {
	return func(s *Scenario) error { s.Cluster.MinReplicasToWrite = n; return nil }
}

// SetMinReplicasMaxLag sets the masters' min-replicas-max-lag.
func SetMinReplicasMaxLag(n int) Override {
	return func(s *Scenario) error { s.Cluster.MinReplicasMaxLag = n; return nil }
}

// WithTLS runs the scenario's topology with TLS.
func WithTLS() Override {
	return func(s *Scenario) error { s.Cluster.TLS = true; return nil }
}

// SetServer runs the named server (cluster.Servers).
func SetServer(name string) Override {
	return func(s *Scenario) error {
		img, err := cluster.ServerImage(name)
		if err != nil {
			return err
		}
		s.Cluster.Image = img
		return nil
	}
}

// overridden is the scenario with o's overrides, in order.
func (s Scenario) overridden(o RunOptions) (Scenario, error) {
	for _, set := range o.Overrides {
		if err := set(&s); err != nil {
			return s, err
		}
	}
	return s, nil
}
