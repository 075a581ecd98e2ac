package nemesis

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/internal/suggest"
	"github.com/deadbolt-lab/deadbolt/workloads"
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
	Nodes []*cluster.Node
	// Slot and Process are set for faults on a client; Slot alone for
	// links (with Nodes at their far end).
	Slot    int
	Process *client.Process
	// Name is how the history shows the target ("redis-3", "process 4",
	// "client 0 -> redis-4,redis-5").
	Name string
	// held is the client held at the moment that made it the target (the
	// holder of a key), until let.
	held *workloads.Caught
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
		names = append(names, n.Name)
	}
	return strings.Join(names, ",")
}

type faultEntry struct {
	summary  string
	target   string // the default selector
	topology string // "" or where the fault works (see allows)
	fault    Fault
}

var faults = map[string]faultEntry{}

// registerFault adds a fault to the catalogue with its default target.
func registerFault(name, target, summary string, f Fault) {
	if _, dup := faults[name]; dup {
		panic("nemesis: duplicate fault " + name)
	}
	faults[name] = faultEntry{summary: summary, target: target, fault: f}
}

// registerFaultOn is registerFault for a fault that works only on some
// topologies (such as a Redis Cluster command).
func registerFaultOn(topology, name, target, summary string, f Fault) {
	registerFault(name, target, summary, f)
	e := faults[name]
	e.topology = topology
	faults[name] = e
}

// Faults lists the fault catalogue, sorted.
func Faults() []string { return slices.Sorted(maps.Keys(faults)) }

// FaultSummary is a fault's one-line description and default target.
func FaultSummary(name string) (summary, target string) {
	e := faults[name]
	return e.summary, e.target
}

func lookupFault(name string) (faultEntry, error) {
	e, ok := faults[name]
	if !ok {
		return faultEntry{}, fmt.Errorf("unknown fault %q (known: %s)%s", name, strings.Join(Faults(), ", "), suggest.Hint(name, Faults()))
	}
	return e, nil
}

// eachNode runs f on every node of t at once and joins the errors.
func eachNode(ctx context.Context, t Target, f func(*cluster.Node, context.Context) error) error {
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
