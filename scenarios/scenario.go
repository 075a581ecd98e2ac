// Package scenarios composes the parts into named, seeded experiments:
// a topology, a lock, a workload, a nemesis and the verdict expected.
package scenarios

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/drivers"
	"github.com/deadbolt-lab/deadbolt/internal/suggest"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// Expectation says whether a scenario must find a violation.
type Expectation string

const (
	// Unsafe scenarios reproduce a known failure: they pass when the
	// checkers find the violation.
	Unsafe Expectation = "unsafe"
	// Safe scenarios pass when no violation is found.
	Safe Expectation = "safe"
	// Unknown: nobody has judged the lock under this failure yet. The run
	// reports its verdict, and neither passes nor fails.
	Unknown Expectation = "unknown"
)

// Limits on what one run may ask of a 2-core machine: each client is an OS
// process, and a run holds its whole history in memory.
const (
	MaxClients = 256
	MaxTime    = time.Hour
)

// Scenario is one named experiment, and the one description of a run's
// shape: a scenario file is it in JSON (file.go), scenario.json is it
// with what the run derived (RunSpec), and the run reads it. A new knob
// is a field here, with its JSON name.
type Scenario struct {
	Name        string      `json:"scenario"`
	Description string      `json:"description"`
	Expect      Expectation `json:"expect"`
	Lock        string      `json:"lock"`
	// Mix are locks the last client slots open instead of Lock (mix.go).
	Mix []LockMix `json:"mix,omitempty"`
	// LockOptions tune the lock every client opens (zero: its defaults).
	LockOptions client.LockOptions `json:"lock_options"`
	Cluster     cluster.Spec       `json:"cluster"`
	// Workload is what clients do under the lock ("" is mutex).
	Workload string `json:"workload"`
	// Reenter: clients acquire a key they hold again, nested, half the
	// time; a run with no re-entry granted did not stage what it set out
	// to, and is unknown.
	Reenter bool `json:"reenter,omitempty"`
	// Queue: the run judges the order of a queue of waiters, so only a
	// lock that keeps one (Catalogue.Queues) runs it.
	Queue bool `json:"queue,omitempty"`
	// Fence: the run judges fencing tokens at the resource, so it counts
	// only if some holder's access was stale (a newer lease had been
	// granted) and met the fence.
	Fence   bool   `json:"fence,omitempty"`
	Nemesis string `json:"nemesis"`
	// Fault tunes the nemesis: its victim, timing, point.
	Fault nemesis.Params `json:"fault"`
	// The workload's shape: clients, keys, ttl, hold_min, hold_max, pause.
	workloads.Shape
	// Time is the fault phase: how long the nemesis has to strike every
	// step. The workload runs on through the heal and convergence, then
	// for Settle (default: two TTLs), and for Time at least.
	Time   Duration `json:"time"`
	Settle Duration `json:"settle,omitempty"`
	// RunOn bounds how long the workload runs on past Settle while it has
	// fewer ok acquires than its minimum (default: Time): a run gathers
	// its evidence by construction, and ends short of it (unknown) only
	// past this bound, not on the clock of a loaded machine.
	RunOn Duration `json:"run_on,omitempty"`
	// Precondition is what must hold when the decisive fault strikes, in
	// words ("client A holds the lock on redis-1..3 when redis-3
	// restarts"); the checker proves it from the history (a lease aimed at
	// is held through the strike, under every fault then in effect).
	Precondition string `json:"precondition,omitempty"`
	// MinAcquires overrides the run's minimum of ok acquires (MinAcquires)
	// for scenarios whose holds are long by design; it is recorded in
	// scenario.json.
	MinAcquires int `json:"min_acquires"`
	// Driver names the shipped driver (package drivers) that runs every
	// client; "" is deadbolt's own client. --driver replaces it.
	Driver string `json:"driver_name,omitempty"`
	// CI marks the scenarios of the CI suite (`deadbolt scenario` with no names).
	CI bool `json:"ci,omitempty"`
	// Upstream is where a library's tracker records the bug a finding
	// reproduces ("" for a finding nobody had reported).
	Upstream string `json:"upstream,omitempty"`
	// Finding: the scenario reproduces a bug of a lock library
	// (findings/), judged at each version known.json lists. It is where
	// the file lies, not what it says.
	Finding bool `json:"-"`
}

// Versions are the locks known.json judges the scenario with, its own
// first: for a finding, the library's affected and fixed versions.
func (s Scenario) Versions() []string {
	out := []string{s.Lock}
	for _, l := range slices.Sorted(maps.Keys(known[s.Name])) {
		if l != s.Lock {
			out = append(out, l)
		}
	}
	return out
}

func (s Scenario) minAcquires() int {
	if s.MinAcquires > 0 {
		return s.MinAcquires
	}
	return MinAcquires
}

// settle is how long the workload runs on once the cluster has converged:
// long enough that every lease granted before convergence has run out and
// the clients have met the healed cluster.
func (s Scenario) settle() time.Duration {
	if s.Settle > 0 {
		return s.Settle.D()
	}
	return max(2*s.TTL.D(), time.Second)
}

// runOn is RunOn, or Time.
func (s Scenario) runOn() time.Duration {
	if s.RunOn > 0 {
		return s.RunOn.D()
	}
	return s.Time.D()
}

// Length is about how long a run of the scenario takes, for running the
// longest of a suite first: its cluster's start, the fault phase, the
// settle, and the convergence of a topology that fails over.
func (s Scenario) Length() time.Duration {
	d := s.Time.D() + s.settle()
	if s.Cluster.Topology != cluster.Independent {
		d += 20 * time.Second
	}
	return d
}

// WorkloadName is the scenario's workload ("" means mutex).
func (s Scenario) WorkloadName() string {
	if s.Workload == "" {
		return "mutex"
	}
	return s.Workload
}

var registry = map[string]Scenario{}

func register(s Scenario) {
	if _, dup := registry[s.Name]; dup {
		panic("scenarios: duplicate " + s.Name)
	}
	if !nemesis.Runs(s.Nemesis, s.Cluster.Topology) {
		panic(fmt.Sprintf("scenarios: %s runs nemesis %s on topology %s", s.Name, s.Nemesis, s.Cluster.Topology))
	}
	if s.Driver != "" {
		if _, err := drivers.Get(s.Driver); err != nil {
			panic(fmt.Sprintf("scenarios: %s: %v", s.Name, err))
		}
	}
	registry[s.Name] = s
}

// Get returns the named scenario. TEMPLATE@LOCK is the scenario TEMPLATE
// with LOCK in place of its own, expecting what the known-results table
// knows (Cell): a matrix's or an audit's cell, or a finding at a version.
func Get(name string) (Scenario, error) {
	s, ok := registry[name]
	if ok {
		return s, nil
	}
	if template, lock, cell := strings.Cut(name, "@"); cell && lock != "" {
		if t, ok := registry[template]; ok {
			return Cell(t, lock), nil
		}
	}
	return Scenario{}, fmt.Errorf("unknown scenario %q (known: %s)%s", name, strings.Join(Names(), ", "), scenarioHint(name))
}

// scenarioHint is the "did you mean" of an unknown scenario name; of
// TEMPLATE@LOCK, the closest template with the same lock.
func scenarioHint(name string) string {
	if template, lock, cell := strings.Cut(name, "@"); cell && lock != "" {
		if t, ok := suggest.Closest(template, Names()); ok {
			return fmt.Sprintf("; did you mean %q?", t+"@"+lock)
		}
		return ""
	}
	return suggest.Hint(name, Names())
}

// Names lists every scenario, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(registry))
}

// CISuite lists the scenarios `make scenario` runs, sorted: a finding in
// CI runs at every version known.json judges it, the affected and the
// fixed (NAME@VERSION beside its own).
func CISuite() []string {
	var out []string
	for _, n := range Names() {
		s := registry[n]
		if !s.CI {
			continue
		}
		out = append(out, n)
		if s.Finding {
			for _, v := range s.Versions()[1:] {
				out = append(out, n+"@"+v)
			}
		}
	}
	return out
}

// Matches reports whether a verdict satisfies the expectation; nothing
// satisfies Unknown (and nothing contradicts it: see reports.Results.Unjudged).
func (e Expectation) Matches(verdict string) bool {
	return (e == Unsafe && verdict == "invalid") || (e == Safe && verdict == "valid")
}

// MatchesStaged is Matches for a run that staged what it set out to, or
// not (staged false): an unsafe scenario passes only when it broke the
// lock as staged, so that a violation found while the planned strike
// missed reproduces nothing the scenario claims (reports.Results.Undecided).
func (e Expectation) MatchesStaged(verdict string, staged bool) bool {
	return e.Matches(verdict) && (staged || e != Unsafe)
}

// Duration is a length of time in a scenario's spec (workloads.Duration):
// a Go duration string in JSON.
type Duration = workloads.Duration
