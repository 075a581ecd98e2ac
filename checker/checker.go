package checker

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/deadbolt-lab/deadbolt/internal/suggest"
)

// Checker judges one property of a history. A new checker is one file
// with one Register call. Checkers run at once over one Input, so Check
// must only read it.
type Checker interface {
	Check(in *Input) Result
}

// Result is one checker's verdict with its evidence.
type Result struct {
	Checker string  `json:"checker"`
	Verdict Verdict `json:"verdict"`
	// Reason says why, in one sentence.
	Reason string `json:"reason"`
	// Applicable is false when there was nothing to judge (fencing for a
	// lock without tokens): the reason says why and the result does not vote.
	Applicable bool `json:"applicable"`
	// Aside keeps a not-applicable result's reason out of the run's summary
	// (the report's table of checks still has it): it is true of nearly
	// every run, as "no queue" is of every lock that never queues.
	Aside bool `json:"aside,omitempty"`
	// Damage is a few words for the run's damage column when the result
	// tells of harm no metric counts ("no fencing": nothing could refuse a
	// stale write).
	Damage    string           `json:"damage,omitempty"`
	Anomalies []Anomaly        `json:"anomalies"`
	Metrics   map[string]int64 `json:"metrics,omitempty"`
	Details   any              `json:"details,omitempty"`
}

// Anomaly is one thing found wrong, of a kind a report can group by.
type Anomaly struct {
	Kind   string   `json:"kind"`
	At     int64    `json:"at"`
	Key    string   `json:"key,omitempty"`
	Leases []string `json:"leases,omitempty"`
	Text   string   `json:"text"`
}

// Anomaly kinds.
const (
	KindDoubleHold = "double-hold"
	// KindReleaseNotHeld is an ok release by a lease that did not hold the
	// key: never granted it, or another lease's lock it removed.
	KindReleaseNotHeld = "release-not-held"
	KindNoLegalOrder   = "no-legal-order"
	KindLiveness       = "liveness"
	KindLostUpdate     = "lost-update"
	KindFenceBackwards = "fence-backwards"
	// KindFenceOrder is a lease whose holding window closed before
	// another's opened on its key, with a token no lower: tokens that do
	// not follow the order of the holds (an expired lease that drew its
	// token after the next holder's, say).
	KindFenceOrder         = "fence-order"
	KindStaleWriteAccepted = "stale-write-accepted"
	KindDuplicateOrder     = "duplicate-order"
	KindOversold           = "oversold"
	// KindQueueJump is a grant that passed a waiter already in line.
	KindQueueJump = "queue-jump"
	// KindFaultFailed is a fault that did not surely start or surely heal,
	// or a health check around one that did not pass: the run did not test
	// what it set out to, so it cannot pass.
	KindFaultFailed = "fault-failed"
	// KindPrecondition is a fault aimed at a grant that struck when the
	// grant did not hold as the scenario needs (its lease not held through
	// the strike, or granted before a fault then in effect): the run did
	// not stage what it set out to.
	KindPrecondition = "precondition"
	// KindUnstagedFailover is a failover Sentinel made of a master no fault
	// had touched (a Sentinel starved into TILT that resumes a stale
	// failover, say): the cluster did more than the scenario staged.
	KindUnstagedFailover = "unstaged-failover"
)

func newResult(name string) Result {
	return Result{Checker: name, Verdict: Valid, Applicable: true, Anomalies: []Anomaly{}, Metrics: map[string]int64{}}
}

type entry struct {
	summary string
	scope   Scope
	build   func(Options) Checker
}

var registry = map[string]entry{}

// Scope is where a checker runs without being named.
type Scope int

const (
	// OnRequest: only where a workload or the user names it.
	OnRequest Scope = iota
	// EveryWorkload: in every workload's runs, beside the workload's own.
	EveryWorkload
	// LockService: it judges the lock service itself, from the lock view
	// alone: in every workload's runs, and on a history checked with no
	// checker named (deadbolt check without a scenario.json).
	LockService
)

// Register makes a checker selectable by name, run where named;
// checker files call it from init.
func Register(name, summary string, build func(Options) Checker) {
	RegisterScoped(name, summary, OnRequest, build)
}

// RegisterScoped is Register for a checker that also runs unnamed,
// where scope says.
func RegisterScoped(name, summary string, scope Scope, build func(Options) Checker) {
	if _, dup := registry[name]; dup {
		panic("checker: duplicate " + name)
	}
	if _, parted := build(Options{}).(Parted); scope == LockService && !parted {
		// A history checked with no checker named is streamed (CheckReader).
		panic("checker: " + name + " judges the lock service but is not Parted: it could not check a history too long to hold")
	}
	registry[name] = entry{summary, scope, build}
}

// Scoped lists the registered checkers of scope, sorted.
func Scoped(scope Scope) []string {
	var names []string
	for _, n := range Names() {
		if registry[n].scope == scope {
			names = append(names, n)
		}
	}
	return names
}

// Names lists the registered checkers, sorted.
func Names() []string { return slices.Sorted(maps.Keys(registry)) }

// Summary is a registered checker's one-line description.
func Summary(name string) string { return registry[name].summary }

// Lookup checks that the named checker exists.
func Lookup(name string) error {
	if _, ok := registry[name]; !ok {
		return fmt.Errorf("unknown checker %q (known: %s)%s", name, strings.Join(Names(), ", "), suggest.Hint(name, Names()))
	}
	return nil
}

// DefaultCheckers judge the lock service itself (scope LockService):
// every workload runs them, and a history checked with no checker named.
func DefaultCheckers() []string { return Scoped(LockService) }

// sortAnomalies orders anomalies by time, then kind and key.
func sortAnomalies(as []Anomaly) {
	sort.SliceStable(as, func(i, j int) bool {
		if as[i].At != as[j].At {
			return as[i].At < as[j].At
		}
		if as[i].Kind != as[j].Kind {
			return as[i].Kind < as[j].Kind
		}
		return as[i].Key < as[j].Key
	})
}
