package nemesis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/deadbolt-lab/deadbolt/topology"
)

// Topology requirements are "" (any topology) or the topologies a schedule
// or fault runs on, separated by "|": a fault declares one in its Needs, a
// schedule at its registration.
const (
	// OnFailover is where a node is the master with replicas that take
	// over: the primary and replica selectors resolve there.
	OnFailover    = topology.Sentinel + "|" + topology.Cluster
	OnSentinel    = topology.Sentinel
	OnCluster     = topology.Cluster
	OnIndependent = topology.Independent
)

// checkTopologies rejects a requirement that names no topology deadbolt
// runs.
func checkTopologies(req string) error {
	if req == "" {
		return nil
	}
	for _, t := range strings.Split(req, "|") {
		if !slices.Contains([]string{topology.Independent, topology.Sentinel, topology.Cluster}, t) {
			return fmt.Errorf("unknown topology %q in %q (known: %s, %s, %s)", t, req, topology.Independent, topology.Sentinel, topology.Cluster)
		}
	}
	return nil
}

// allows reports whether requirement req admits topology t.
func allows(req, t string) bool {
	return req == "" || slices.Contains(strings.Split(req, "|"), t)
}

// narrow is the topologies both requirements admit; ok is false when none.
func narrow(a, b string) (string, bool) {
	switch {
	case a == "":
		return b, true
	case b == "":
		return a, true
	}
	var both []string
	for _, t := range strings.Split(a, "|") {
		if allows(b, t) {
			both = append(both, t)
		}
	}
	return strings.Join(both, "|"), len(both) > 0
}

// Allows reports whether the schedule's needs admit topology t.
func (n Needs) Allows(t string) bool { return allows(n.Topology, t) }

// Runs reports whether the named schedule can run on topology t at all.
func Runs(name, t string) bool { return allows(registry[name].topology, t) }

// topologyWords says a requirement in words: "the sentinel or cluster
// topology".
func topologyWords(req string) string {
	return "the " + strings.ReplaceAll(req, "|", " or ") + " topology"
}

// TopologyWords is topologyWords for a schedule's needs.
func (n Needs) TopologyWords() string { return topologyWords(n.Topology) }
