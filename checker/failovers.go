package checker

import (
	"fmt"
	"strings"

	"github.com/deadbolt-lab/deadbolt/history"
)

// Sentinel fails a master over when a fault took it away: the scenario
// stages that. A switch away from a master that no fault had touched by
// then is the cluster acting on its own (on a starved machine a Sentinel
// whose timer fired late enters TILT, and on leaving it may finish a
// failover it began on a stale view). What the lock did after it answers
// no question the scenario asked, so the run is unknown, not a verdict.
//
// unstagedFailovers returns one anomaly for each such switch. A switch is
// staged when a fault window on the old master started before it, or a
// fault that asks for one (its declared effects say which node it
// promotes). A Redis Cluster's switches of the primary key's slot
// master are judged alike. A link fault is no fault on a
// node: it sits between one client and the node, which Sentinel never sees.
func unstagedFailovers(in *Input) []Anomaly {
	var out []Anomaly
	for _, p := range in.nemesis {
		inv := p.Invoke
		if inv.F != history.Failover {
			continue
		}
		from, to, ok := strings.Cut(inv.Node, " -> ")
		if !ok || staged(in.Faults, from, to, inv.Time) {
			continue
		}
		who := fmt.Sprintf("Sentinel switched the master from %s to %s at %s (first told by %s)", from, to, at(inv.Time), inv.Fault)
		if inv.Fault == "cluster" {
			who = fmt.Sprintf("the cluster moved the primary key's slot from master %s to %s at %s", from, to, at(inv.Time))
		}
		text := fmt.Sprintf("%s, and no fault had touched %s", who, from)
		if t := tiltsBefore(in.nemesis, inv.Time); t != "" {
			text += "; " + t
		}
		out = append(out, Anomaly{Kind: KindUnstagedFailover, At: inv.Time, Text: text})
	}
	return out
}

// staged reports a fault window started before t on the old master from,
// or one of a fault that promotes a node itself: any node (a Sentinel
// asked for a failover), or the node it struck when that is to.
func staged(ws []FaultWindow, from, to string, t int64) bool {
	for _, w := range ws {
		if w.Start > t || w.OnClients() {
			continue
		}
		asked := w.Effects.Promotes == history.PromotesAny || (w.Effects.Promotes == history.PromotesStruck && namesNode(w.Node, to))
		if asked || namesNode(w.Node, from) {
			return true
		}
	}
	return false
}

// namesNode reports node among a window's nodes ("redis-1",
// "redis-2,redis-4", "redis-3 by 16s").
func namesNode(nodes, node string) bool {
	for _, n := range strings.FieldsFunc(nodes, func(r rune) bool { return r == ',' || r == ' ' }) {
		if n == node {
			return true
		}
	}
	return false
}

// tiltsBefore says which Sentinels entered TILT mode before t, the usual
// reason for a failover nobody staged.
func tiltsBefore(nemesis []history.Operation, t int64) string {
	var tilts []string
	for _, p := range nemesis {
		if inv := p.Invoke; inv.F == history.Tilt && inv.Node == "entered" && inv.Time <= t {
			tilts = append(tilts, fmt.Sprintf("%s entered TILT mode at %s", inv.Fault, at(inv.Time)))
		}
	}
	return strings.Join(tilts, ", ")
}

// Observed is something the harness saw the cluster do by itself: a
// master switch (Sentinel's +switch-master, or a Redis Cluster's slot
// master by a majority of its nodes) or a Sentinel entering or leaving TILT.
type Observed struct {
	F history.F `json:"f"`
	// What is "OLD -> NEW" for a failover, "entered"/"left" for TILT.
	What string `json:"what"`
	// By is who told it: a Sentinel, or "cluster".
	By string `json:"by"`
	At int64  `json:"at"`
}

// Text says it in words for a report.
func (o Observed) Text() string {
	if o.F == history.Failover {
		if o.By == "cluster" {
			return "the cluster promoted: master " + o.What
		}
		return "Sentinel switched the master: " + o.What + " (told first by " + o.By + ")"
	}
	return o.By + " " + o.What + " TILT mode"
}

// Observed lists what the cluster was seen to do, in time order.
func (in *Input) Observed() []Observed { return observed(in.nemesis) }

// observed lists what the cluster was seen to do, in time order.
func observed(nemesis []history.Operation) []Observed {
	var out []Observed
	for _, p := range nemesis {
		if inv := p.Invoke; inv.F.IsObserved() {
			out = append(out, Observed{F: inv.F, What: inv.Node, By: inv.Fault, At: inv.Time})
		}
	}
	return out
}
