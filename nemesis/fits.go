package nemesis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/deadbolt-lab/deadbolt/internal/suggest"
)

// Needs is what a schedule asks of the cluster it runs on, known before
// any container starts: what its faults declare (FaultDecl.Needs), with
// what their targets need.
type Needs struct {
	// Topology is "" when any will do, else the topologies it runs on
	// ("sentinel|cluster"): see Allows.
	Topology string
	// ClockFaults and LinkFaults: nodes with a movable clock, clients
	// reaching nodes through proxies.
	ClockFaults, LinkFaults bool
}

// NeedsOf reads what the named schedule with p will ask of the cluster.
func NeedsOf(name string, p Params) (Needs, error) {
	e, ok := registry[name]
	if !ok {
		return Needs{}, fmt.Errorf("unknown nemesis %q (known: %s)%s", name, strings.Join(Names(), ", "), suggest.Hint(name, Names()))
	}
	type aim struct{ fault, target string }
	var aims []aim
	for _, s := range p.Steps {
		aims = append(aims, aim{s.Fault, s.Target})
	}
	for _, f := range p.Faults {
		aims = append(aims, aim{f, "random"})
	}
	need := Needs{Topology: e.topology}
	for _, a := range aims {
		fe, err := lookupFault(a.fault)
		if err != nil {
			return Needs{}, err
		}
		switch a.target {
		case "":
			a.target = fe.target
		case "random":
			a.target = fe.randomTarget()
		}
		need.ClockFaults = need.ClockFaults || fe.decl.Needs.ClockFaults
		need.LinkFaults = need.LinkFaults || fe.decl.Needs.LinkFaults
		req := fe.decl.Needs.Topology
		switch kind, _, _ := strings.Cut(a.target, ":"); kind {
		case "primary", "replica":
			req, _ = narrow(req, OnFailover)
		case "sentinel":
			req, _ = narrow(req, OnSentinel)
		}
		both, ok := narrow(need.Topology, req)
		if !ok {
			return Needs{}, fmt.Errorf("fault %s on %s needs %s, and the schedule runs on %s", a.fault, a.target, topologyWords(req), topologyWords(need.Topology))
		}
		need.Topology = both
	}
	return need, nil
}

// NodeFaults lists the faults of a schedule that act on nodes (kill,
// restart, freeze, isolate, move a clock, fail over): they need deadbolt's
// own containers, and a run against an existing deployment (--target)
// cannot have them. Client and link faults are not listed, nor those a
// Redis command alone makes (FaultDecl.ByCommand).
func NodeFaults(name string, p Params) ([]string, error) {
	aims, err := aimsOf(name, p)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range aims {
		target := s.Target
		if target == "" {
			target = faults[s.Fault].target
		}
		switch kind, _, _ := strings.Cut(target, ":"); {
		case kind == "client" || kind == "holder" || kind == "link":
		case faults[s.Fault].decl.ByCommand:
		default:
			out = append(out, s.Fault+" on "+target)
		}
	}
	return out, nil
}

// FaultsOf lists the faults the named schedule with p strikes, each once,
// in the order it first strikes them (the random schedule: its choices).
func FaultsOf(name string, p Params) ([]string, error) {
	aims, err := aimsOf(name, p)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range aims {
		if !slices.Contains(out, s.Fault) {
			out = append(out, s.Fault)
		}
	}
	return out, nil
}

// aimsOf are the steps the named schedule with p may strike: a plan's (a
// preset's one), or each of the random schedule's faults on its random
// target. A schedule registered from outside, of another type, has none
// that can be told before it runs.
func aimsOf(name string, p Params) ([]Step, error) {
	n, err := New(name, p)
	if err != nil {
		return nil, err
	}
	var aims []Step
	switch s := n.(type) {
	case *Plan:
		aims = s.Steps
	case *Random:
		for _, f := range s.P.Faults {
			fe, err := lookupFault(f)
			if err != nil {
				return nil, err
			}
			aims = append(aims, Step{Fault: f, Target: fe.randomTarget()})
		}
	}
	return aims, nil
}
