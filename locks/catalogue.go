package locks

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/internal/suggest"
)

// Catalogue says what a lock is and needs before any container starts:
// the Go locks' registry (Registry), or what a driver's hello declared
// (Declared).
type Catalogue interface {
	Names() []string
	// Lookup checks that the lock exists, naming the known ones if not.
	Lookup(name string) error
	// Fits checks that the lock can run over this many master groups.
	Fits(name string, groups int) error
	// RunsOn checks that the lock runs on the topology at all.
	RunsOn(name, topology string) error
	// HasPoint checks that the lock stops at the named point.
	HasPoint(name, point string) error
	// Reentrant: the lock lets a holder acquire a key it holds again.
	Reentrant(name string) bool
	// Fencing: the lock's grants carry a fencing token.
	Fencing(name string) bool
	// Queues: the lock keeps waiters in line and says when one stands in
	// it, so a queue's order can be judged.
	Queues(name string) bool
	// Summary says what the lock is, in a line.
	Summary(name string) string
	// SentinelMode is the way of following a Sentinel failover to ask the
	// lock for, given what the scenario asks ("": nothing in particular):
	// a lock that declares one way only gets that one, and one asked for a
	// way it does not declare is refused.
	SentinelMode(name, asked string) (string, error)
	// TLS checks that the lock connects over TLS when its endpoints carry
	// a CA (tls_ca): a lock that does not know TLS is refused before a
	// TLS cluster starts, rather than met by nodes that refuse plaintext.
	TLS(name string) error
	// Offers checks that the lock offers a call on a held lease
	// (CallExtend, CallReacquire), which a workload needs.
	Offers(name, call string) error
	// Calls lists the calls on a held lease the lock offers.
	Calls(name string) []string
	// Points lists the named points the lock stops at on request.
	Points(name string) []string
	// Renews: the lock renews a lease on its own while it is held (a
	// watchdog), so its renewals decide a lease as an extend does.
	Renews(name string) bool
	// Resends: the lock's client sends a command again when its reply did
	// not come in time, so a node's stall past the call timeout decides
	// a lease.
	Resends(name string) bool
	// Behaviour is what the lock does as configured (its call timeout, its
	// retries, how long a call may take), derived from its client.
	Behaviour(name string) Behaviour
	// Knobs are the library's own settings the lock takes, with their
	// defaults; none for deadbolt's own locks.
	Knobs(name string) Knobs
}

// Registry is the catalogue of the locks compiled into deadbolt, as they
// run with the options' defaults.
var Registry Catalogue = registryCatalogue{}

// RegistryWith is the same catalogue for locks run with o (what a scenario
// gives them: a call timeout, knobs): what a lock does as configured
// (Behaviour) follows o.
func RegistryWith(o Options) Catalogue { return registryCatalogue{o} }

type registryCatalogue struct{ o Options }

func (registryCatalogue) Names() []string                    { return Names() }
func (registryCatalogue) Lookup(name string) error           { return Lookup(name) }
func (registryCatalogue) Fits(name string, groups int) error { return Fits(name, groups) }
func (registryCatalogue) RunsOn(name, topology string) error { return RunsOn(name, topology) }
func (registryCatalogue) HasPoint(name, point string) error  { return HasPoint(name, point) }
func (registryCatalogue) Reentrant(name string) bool         { return Reentrant(name) }
func (registryCatalogue) Fencing(name string) bool           { return Fencing(name) }
func (registryCatalogue) Queues(name string) bool            { return Queues(name) }
func (registryCatalogue) Summary(name string) string         { return Summary(name) }

// The Go locks follow a failover either way (endpoints.ClientOptions).
func (registryCatalogue) SentinelMode(_, asked string) (string, error) { return asked, nil }

// The Go locks dial through the endpoints' Dialer (go-redis clients from
// OneClient, rueidis's DialCtxFn), which does the TLS handshake itself.
func (registryCatalogue) TLS(string) error { return nil }

func (registryCatalogue) Calls(name string) []string  { return Calls(name) }
func (registryCatalogue) Points(name string) []string { return Points(name) }
func (registryCatalogue) Renews(name string) bool     { return Renews(name) }
func (c registryCatalogue) Resends(name string) bool  { return c.Behaviour(name).Resends }
func (registryCatalogue) Knobs(name string) Knobs     { return KnobsOf(name) }

func (c registryCatalogue) Behaviour(name string) Behaviour {
	d, _ := DeclareWith(name, c.o)
	return d.Behaviour
}

func (registryCatalogue) Offers(name, call string) error {
	if err := Lookup(name); err != nil {
		return err
	}
	return offers(name, "", call, Calls(name))
}

// offers checks that calls, a lock's, include call.
func offers(name, driver, call string, calls []string) error {
	if slices.Contains(calls, call) {
		return nil
	}
	have := "none"
	if len(calls) > 0 {
		have = strings.Join(calls, ", ")
	}
	of := ""
	if driver != "" {
		of = " of driver " + driver
	}
	return fmt.Errorf("lock %s%s does not offer %s on a held lease (its calls: %s)", name, of, call, have)
}

// unreachableFor is the fewest unreachable masters the lock runs over,
// to build it without dialling.
func unreachableFor(name string) endpoints.Endpoints {
	for n := 1; n <= maxGroups; n++ {
		if Fits(name, n) == nil {
			return endpoints.Unreachable(n)
		}
	}
	return endpoints.Unreachable(1)
}

// Declaration is what a driver's hello may say about one of its locks
// (docs/driver-protocol.md, "lock_info"), so that a scenario it cannot run
// is refused before any container starts.
type Declaration struct {
	Summary string `json:"summary,omitempty"`
	// MinGroups and MaxGroups bound the master groups the lock runs over
	// (RedLock: one group per independent master); 0 means 1 and no bound.
	MinGroups int `json:"min_groups,omitempty"`
	MaxGroups int `json:"max_groups,omitempty"`
	// Points are the named points the lock stops at on request.
	Points []string `json:"points,omitempty"`
	// Reentrant: a holder may acquire a key it holds again (one hold).
	Reentrant bool `json:"reentrant,omitempty"`
	// Fencing: the lock's grants carry a fencing token (the reply's fence).
	Fencing bool `json:"fencing,omitempty"`
	// Queues: the lock keeps waiters in line and says when an acquire
	// stands in it (the reply's queued_mono_ns).
	Queues bool `json:"queues,omitempty"`
	// Sentinel lists the ways the lock's library follows a Sentinel
	// failover ("switch", "reconnect": the protocol's options.sentinel);
	// none declared: both.
	Sentinel []string `json:"sentinel,omitempty"`
	// Topologies lists the topologies the lock runs on ("sentinel",
	// "independent", "cluster"); none declared: sentinel and independent,
	// the ones there were before a driver had to know cluster endpoints.
	Topologies []string `json:"topologies,omitempty"`
	// TLS: the lock connects over TLS, verified by the endpoints' tls_ca,
	// when they carry one; none declared: it is never sent a TLS cluster.
	TLS bool `json:"tls,omitempty"`
	// Calls are the calls the lock offers on a held lease: "extend",
	// "reacquire" (the protocol's ops of those names).
	Calls []string `json:"calls,omitempty"`
	// Renews: the lock renews a lease on its own while it is held (a
	// watchdog), telling each renewal as a renew event.
	Renews bool `json:"renews,omitempty"`
	// Behaviour is what the lock does as configured, derived from the
	// client it built: its call timeout, its retries, whether it resends
	// a timed-out command (resends), how long a call may take, the knobs
	// set away from their defaults.
	Behaviour
	// Options are the library's own settings the lock takes (knobs), with
	// the library's defaults: a driver that declares any answers the
	// declare request, with its lock_info as those options make it.
	Options Knobs `json:"options,omitempty"`
	// Library and Version name the third-party library the lock runs and
	// the version the driver was built with, as the driver's own build
	// reports it (absent for deadbolt's own locks).
	Library string `json:"library,omitempty"`
	Version string `json:"version,omitempty"`
}

// topologies are every topology's name, for Declare.
var topologies = []string{endpoints.Sentinel, endpoints.Independent, endpoints.Cluster}

// maxGroups is the most master groups a topology of deadbolt's has.
const maxGroups = 9

// Declare is a registered lock's declaration at its defaults: the Go
// driver's hello.
func Declare(name string) Declaration {
	d, _ := DeclareWith(name, Options{})
	return d
}

// DeclareWith is a registered lock's declaration as it runs with o (what
// the caller gave, before defaults): its calls and its behaviour read off
// the lock built with o, over endpoints it never dials. An option the lock
// refuses (an unknown knob, a bad value) is the error, with the
// declaration at what it could read.
func DeclareWith(name string, o Options) (Declaration, error) {
	d := Declaration{Summary: Summary(name), Points: Points(name), Reentrant: Reentrant(name), Fencing: Fencing(name), Queues: Queues(name), TLS: Registry.TLS(name) == nil, Options: KnobsOf(name)}
	settings, err := KnobsOf(name).Resolve(o.Knobs, o)
	if err != nil {
		return d, fmt.Errorf("lock %s: %w", name, err)
	}
	l, err := New(name, unreachableFor(name), o)
	if err != nil {
		return d, err
	}
	d.Calls, d.Behaviour = CallsOf(l), behaviourOf(l, o)
	if r, ok := l.(Renewer); ok {
		d.Renews = r.RenewsWhileHeld()
	}
	Close(l)
	d.Behaviour.Settings = settings.Changed(d.Options)
	for n := 1; n <= maxGroups; n++ {
		if Fits(name, n) != nil {
			continue
		}
		if d.MinGroups == 0 {
			d.MinGroups = n
		}
		d.MaxGroups = n
	}
	if d.MaxGroups == maxGroups {
		d.MaxGroups = 0 // no bound
	}
	for _, t := range topologies {
		if RunsOn(name, t) == nil {
			d.Topologies = append(d.Topologies, t)
		}
	}
	return d, nil
}

// Declared is the catalogue of a driver's locks, from its hello.
type Declared struct {
	// Driver names the driver in messages (its command line).
	Driver string
	Locks  []string
	Info   map[string]Declaration
}

func (d Declared) Names() []string { return slices.Sorted(slices.Values(d.Locks)) }

func (d Declared) Lookup(name string) error {
	if !slices.Contains(d.Locks, name) {
		return fmt.Errorf("unknown lock %q: driver %s offers %s%s", name, d.Driver, strings.Join(d.Names(), ", "), suggest.Hint(name, d.Names()))
	}
	return nil
}

func (d Declared) Fits(name string, groups int) error {
	if err := d.Lookup(name); err != nil {
		return err
	}
	i := d.Info[name]
	lo, hi := max(i.MinGroups, 1), i.MaxGroups
	switch {
	case groups < lo:
		return fmt.Errorf("lock %s of driver %s needs at least %d master groups, got %d", name, d.Driver, lo, groups)
	case hi > 0 && groups > hi:
		return fmt.Errorf("lock %s of driver %s runs over at most %d master group(s), got %d", name, d.Driver, hi, groups)
	}
	return nil
}

func (d Declared) RunsOn(name, topology string) error {
	if err := d.Lookup(name); err != nil {
		return err
	}
	ts := d.Info[name].Topologies
	if len(ts) == 0 {
		ts = []string{endpoints.Sentinel, endpoints.Independent}
	}
	if !slices.Contains(ts, topology) {
		return fmt.Errorf("lock %s of driver %s runs on the %s topologies (its lock_info's topologies), not on %s", name, d.Driver, strings.Join(ts, " and "), topology)
	}
	return nil
}

func (d Declared) HasPoint(name, point string) error {
	if err := d.Lookup(name); err != nil {
		return err
	}
	ps := d.Info[name].Points
	if slices.Contains(ps, point) {
		return nil
	}
	have := "none"
	if len(ps) > 0 {
		have = strings.Join(ps, ", ")
	}
	return fmt.Errorf("lock %s of driver %s has no point %q (its points: %s)", name, d.Driver, point, have)
}

func (d Declared) Reentrant(name string) bool { return d.Info[name].Reentrant }

func (d Declared) Fencing(name string) bool { return d.Info[name].Fencing }

func (d Declared) Queues(name string) bool { return d.Info[name].Queues }

func (d Declared) Summary(name string) string {
	if s := d.Info[name].Summary; s != "" {
		return s
	}
	return "(declared no summary)"
}

func (d Declared) SentinelMode(name, asked string) (string, error) {
	modes := d.Info[name].Sentinel
	switch {
	case len(modes) == 0:
		return asked, nil
	case asked == "" && len(modes) == 1:
		return modes[0], nil // what its library does, not a default it lacks
	case asked == "" || slices.Contains(modes, asked):
		return asked, nil
	}
	return "", fmt.Errorf("lock %s of driver %s follows a Sentinel failover only by %s (its lock_info's sentinel), and the scenario asks for %s",
		name, d.Driver, strings.Join(modes, " or "), asked)
}

func (d Declared) Calls(name string) []string  { return d.Info[name].Calls }
func (d Declared) Points(name string) []string { return d.Info[name].Points }
func (d Declared) Renews(name string) bool     { return d.Info[name].Renews }
func (d Declared) Resends(name string) bool    { return d.Info[name].Resends }
func (d Declared) Knobs(name string) Knobs     { return d.Info[name].Options }

func (d Declared) Behaviour(name string) Behaviour { return d.Info[name].Behaviour }

func (d Declared) Offers(name, call string) error {
	if err := d.Lookup(name); err != nil {
		return err
	}
	return offers(name, d.Driver, call, d.Info[name].Calls)
}

func (d Declared) TLS(name string) error {
	if err := d.Lookup(name); err != nil {
		return err
	}
	if !d.Info[name].TLS {
		return fmt.Errorf("lock %s of driver %s does not declare TLS (its lock_info's tls), and every node of a TLS cluster refuses plaintext", name, d.Driver)
	}
	return nil
}

// debate are the registered locks that declared themselves the Redlock
// debate's (InDebate), by their row.
var debate = map[string]int{}

// InDebate declares a registered lock one of the Redlock debate's: the
// matrix's rows unless it is told others. row places it in the table, the
// debate's argument read top down (a single master, then the remedies,
// then RedLock and the libraries). Lock files call it from init, after
// Register.
func InDebate(name string, row int) {
	if err := Lookup(name); err != nil {
		panic("locks: InDebate: " + err.Error())
	}
	for other, r := range debate {
		if r == row {
			panic(fmt.Sprintf("locks: InDebate: %s and %s both take row %d", other, name, row))
		}
	}
	debate[name] = row
}

// Debate lists the locks of the Redlock debate (InDebate), by row.
func Debate() []string {
	return slices.SortedFunc(maps.Keys(debate), func(a, b string) int { return cmp.Compare(debate[a], debate[b]) })
}
