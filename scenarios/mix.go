package scenarios

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/drivers"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// LockMix is a lock some of a run's clients open instead of the
// scenario's, each through the driver it needs: Clients of them, the last
// client slots, in the order the mix gives. A rolling upgrade runs the old
// version beside the new (--lock redsync@v4.0.4 --lock-mix redsync@v4.0.3:1);
// two libraries on one key show whether they exclude each other.
type LockMix struct {
	Lock    string `json:"lock"`
	Clients int    `json:"clients"`
}

func (m LockMix) String() string { return m.Lock + ":" + strconv.Itoa(m.Clients) }

// ParseLockMix reads LOCK:CLIENTS (--lock-mix).
func ParseLockMix(s string) (LockMix, error) {
	i := strings.LastIndex(s, ":")
	if i <= 0 {
		return LockMix{}, fmt.Errorf("a lock mixed in is LOCK:CLIENTS (e.g. redsync@v4.0.3:1), got %q", s)
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n < 1 {
		return LockMix{}, fmt.Errorf("%q: the clients of a lock mixed in are a whole number of at least 1", s)
	}
	return LockMix{Lock: s[:i], Clients: n}, nil
}

// mixed is a lock of the mix with the driver that runs it and that
// driver's locks.
type mixed struct {
	LockMix
	driver client.Command // empty: deadbolt's own client
	locks  locks.Catalogue
}

// mixDrivers finds each mixed lock's driver, before anything starts: a
// library at a version its own (built on first use), a lock the run's
// driver offers that driver, else one of deadbolt's own locks its client.
func (o RunOptions) mixDrivers(mix []LockMix) ([]mixed, error) {
	var out []mixed
	for _, m := range mix {
		switch {
		case drivers.IsVersioned(m.Lock):
			lib, err := withLibrary(RunOptions{Log: o.Log}, m.Lock, helloOnly)
			if err != nil {
				return nil, fmt.Errorf("mixed lock %s: %w", m.Lock, err)
			}
			out = append(out, mixed{m, lib.Driver, lib.Locks})
		case o.catalogue().Lookup(m.Lock) == nil:
			out = append(out, mixed{m, o.Driver, o.catalogue()})
		default:
			if err := locks.Registry.Lookup(m.Lock); err != nil {
				return nil, fmt.Errorf("mixed lock %s: %w", m.Lock, err)
			}
			out = append(out, mixed{m, client.Command{}, locks.Registry})
		}
	}
	return out, nil
}

// checkMix judges the mixed locks in the prepared scenario as apply
// judges its own lock (fitsLock), and each must follow a Sentinel
// failover the way the scenario's lock does and judge re-entry as it
// does; the scenario's lock keeps at least one client.
func (s Scenario) checkMix(o RunOptions, kind workloads.Kind, groups int) error {
	n := 0
	for _, m := range o.mixed {
		n += m.Clients
		fail := func(err error) error { return fmt.Errorf("mixed lock %s: %w", m.Lock, err) }
		if err := s.fitsLock(m.locks, m.Lock, kind, groups); err != nil {
			return fail(err)
		}
		if s.Cluster.Topology == cluster.Sentinel {
			if _, err := m.locks.SentinelMode(m.Lock, s.LockOptions.Sentinel); err != nil {
				return fail(err)
			}
		}
		if m.locks.Reentrant(m.Lock) != o.catalogue().Reentrant(s.Lock) {
			return fail(fmt.Errorf("it and %s differ in re-entry, and one run judges re-entry one way", s.Lock))
		}
	}
	if n >= s.Clients {
		return fmt.Errorf("scenario %s: the mixed locks (%s) take %d of its %s; %s needs at least one of its own", s.Name, mixText(s.Mix), n, checker.Plural(s.Clients, "client"), s.Lock)
	}
	return nil
}

// mixesOwn: a mixed lock runs on deadbolt's own client.
func (o RunOptions) mixesOwn() bool {
	for _, m := range o.mixed {
		if m.driver.Path == "" {
			return true
		}
	}
	return false
}

// workloadMix is the mix as the workload runs it.
func (o RunOptions) workloadMix(own client.Command) []workloads.Mixed {
	var out []workloads.Mixed
	for _, m := range o.mixed {
		d := m.driver
		if d.Path == "" {
			d = own
		}
		out = append(out, workloads.Mixed{Lock: m.Lock, Driver: d, Clients: m.Clients})
	}
	return out
}

func mixText(mix []LockMix) string {
	var parts []string
	for _, m := range mix {
		parts = append(parts, m.String())
	}
	return strings.Join(parts, ", ")
}
