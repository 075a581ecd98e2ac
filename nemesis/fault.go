package nemesis

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/internal/suggest"
	"github.com/deadbolt-lab/deadbolt/workloads/moment"
)

// Fault is one kind of damage, apart from where and when it strikes: it
// breaks a target and returns how to heal it. Targets come from selectors
// (target.go), timing from schedules (plan.go).
type Fault interface {
	Inject(ctx context.Context, env Env, t Target, by time.Duration) (Heal, error)
}

// Heal undoes one injected fault.
type Heal func(context.Context) error

// FaultFunc adapts a function to Fault.
type FaultFunc func(ctx context.Context, env Env, t Target, by time.Duration) (Heal, error)

func (f FaultFunc) Inject(ctx context.Context, env Env, t Target, by time.Duration) (Heal, error) {
	return f(ctx, env, t, by)
}

// Target is what a selector chose: nodes, a client process, or a client
// slot's links to nodes.
type Target struct {
	Nodes []Node
	// Slot and Process are set for faults on a client; Slot alone for
	// links (with Nodes at their far end).
	Slot    int
	Process moment.Process
	// Name is how the history shows the target ("redis-3", "process 4",
	// "client 0 -> redis-4,redis-5").
	Name string
	// held is the client held at the moment that made it the target (the
	// holder of a key), until let.
	held *moment.Caught
	// aim is the request in flight a fault inside an operation strikes.
	aim *aimed
}

// let lets a client held at its moment go on.
func (t Target) let() {
	if t.held != nil {
		t.held.Let()
	}
}

// Selector is the target as a concrete selector: the nodes, the client
// slot, or the slot's links to the nodes.
func (t Target) Selector() string {
	switch {
	case t.Process != nil:
		return fmt.Sprintf("client:%d", t.Slot)
	case len(t.Nodes) > 0 && strings.HasPrefix(t.Name, "client "):
		return fmt.Sprintf("link:%d:%s", t.Slot, t.nodeNames())
	case len(t.Nodes) > 0:
		return "node:" + t.nodeNames()
	}
	return ""
}

func (t Target) nodeNames() string {
	var names []string
	for _, n := range t.Nodes {
		names = append(names, n.Name())
	}
	return strings.Join(names, ",")
}

// FaultDecl declares a fault where it is defined: what it does, where it
// strikes unless a step says, what it needs of the cluster and how the
// random schedule draws it. The schedules, NeedsOf and NodeFaults read
// these alone, so a fault registered from outside the package runs as the
// built-in ones do.
type FaultDecl struct {
	Name    string
	Summary string
	// Target is the selector it strikes when a step names none (target.go).
	Target string
	// RandomTarget is the selector the random schedule aims it at; "" takes
	// the seed-chosen counterpart of Target's kind (a minority of the nodes,
	// any client, one client's links to a minority).
	RandomTarget string
	// Needs is what it asks of the cluster: the topologies it works on
	// ("": any; OnCluster ...), nodes with a movable clock, clients that
	// reach the nodes through proxied links.
	Needs Needs
	// ByCommand: a Redis command alone makes it, so a deployment deadbolt
	// did not start takes it too (NodeFaults leaves it out).
	ByCommand bool
	// Size draws the step's By for the random schedule, from the seed and
	// the lease TTL; nil: the fault has no size.
	Size func(rng *rand.Rand, ttl time.Duration) time.Duration
	// SignedBy: a negative By means something (a clock moved back).
	SignedBy bool
	// Effects say what it does to the nodes it strikes (effects.go).
	Effects Effects
	Fault   Fault
}

// faultEntry is a registered fault: its declaration, with its default
// target and its Fault under the names the schedules read.
type faultEntry struct {
	decl   FaultDecl
	target string
	fault  Fault
}

var faults = map[string]faultEntry{}

// RegisterFault adds a fault to the catalogue (`deadbolt faults`, plans,
// the random schedule). It panics on a declaration no run could use: call
// it from init, as locks.Register is called.
func RegisterFault(d FaultDecl) {
	if err := d.check(); err != nil {
		panic("nemesis: fault " + d.Name + ": " + err.Error())
	}
	faults[d.Name] = faultEntry{decl: d, target: d.Target, fault: d.Fault}
}

func (d FaultDecl) check() error {
	switch _, dup := faults[d.Name]; {
	case d.Name == "":
		return errors.New("no name")
	case dup:
		return errors.New("registered twice")
	case d.Fault == nil:
		return errors.New("no Fault")
	case d.Summary == "":
		return errors.New("no summary")
	}
	if err := checkSelector(d.Target); err != nil {
		return err
	}
	if d.RandomTarget != "" {
		if err := checkSelector(d.RandomTarget); err != nil {
			return fmt.Errorf("random target: %w", err)
		}
	}
	return checkTopologies(d.Needs.Topology)
}

// Faults lists the fault catalogue, sorted.
func Faults() []string { return slices.Sorted(maps.Keys(faults)) }

// FaultSummary is a fault's one-line description and default target.
func FaultSummary(name string) (summary, target string) {
	e := faults[name]
	return e.decl.Summary, e.target
}

// FaultOf is the named fault's declaration.
func FaultOf(name string) (FaultDecl, error) {
	e, err := lookupFault(name)
	return e.decl, err
}

func lookupFault(name string) (faultEntry, error) {
	e, ok := faults[name]
	if !ok {
		return faultEntry{}, fmt.Errorf("unknown fault %q (known: %s)%s", name, strings.Join(Faults(), ", "), suggest.Hint(name, Faults()))
	}
	return e, nil
}

// randomTarget is the selector the random schedule aims the fault at.
func (e faultEntry) randomTarget() string {
	if e.decl.RandomTarget != "" {
		return e.decl.RandomTarget
	}
	return randomTarget(e.target)
}

// eachNode runs f on every node of t at once and joins the errors.
func eachNode(ctx context.Context, t Target, f func(Node, context.Context) error) error {
	errs := make(chan error, len(t.Nodes))
	for _, n := range t.Nodes {
		go func() { errs <- f(n, ctx) }()
	}
	var all []error
	for range t.Nodes {
		if err := <-errs; err != nil {
			all = append(all, err)
		}
	}
	return errors.Join(all...)
}
