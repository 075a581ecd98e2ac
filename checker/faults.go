package checker

import (
	"fmt"
	"sort"

	"github.com/deadbolt-lab/deadbolt/history"
)

// FaultWindow is the stretch of history during which one nemesis fault on
// one node may have been in effect: from the fault-start invocation (the
// fault can bite as soon as the nemesis starts applying it) to the
// completion of the fault-end that healed it.
type FaultWindow struct {
	Fault string `json:"fault"`
	// ID names the fault instance ("f12"); empty in older histories.
	ID    string `json:"id,omitempty"`
	Node  string `json:"node,omitempty"`
	Start int64  `json:"start"`
	// Struck is when the strike completed (the fault-start's completion):
	// a restart's node is down from Start to Struck and up again after,
	// though its window lasts to End. Zero when it never completed, and
	// in older histories.
	Struck int64 `json:"struck,omitempty"`
	End    int64 `json:"end"`
	// Healed is false when no fault-end completed ok before the history
	// ended; End is then the end of the history.
	Healed bool `json:"healed"`
	// Target is the selector of what the fault struck, made concrete
	// (client:1, link:0:redis-1, node:redis-3); empty in older histories.
	Target string `json:"target,omitempty"`
	// Effects are what the fault does, as its fault-start recorded them
	// (history.EffectsOf).
	Effects history.Effects `json:"effects"`
	// By is the fault's size in nanoseconds (a delay's), 0 when it has
	// none or its history did not record it.
	By int64 `json:"by,omitempty"`
}

// OnClients reports a fault on a client or its links only: it cannot
// change what any lock-service node holds.
func (w FaultWindow) OnClients() bool { return w.Effects.OnClients }

// OnClock reports a fault that moves a node's clock: Redis expires keys
// by its wall clock, so while it lasts a key's expiry is not the TTL's.
func (w FaultWindow) OnClock() bool { return w.Effects.MovesClock }

// KeepsKeys reports a fault that leaves every key on the lock service's
// nodes until it expires: one on clients or their links, closed
// connections, or a frozen node (its keys expire by the wall clock all
// the same). A failover it leads to is recorded apart.
func (w FaultWindow) KeepsKeys() bool { return w.OnClients() || w.Effects.KeepsKeys }

// Span says when the fault was in effect, in words: from its start to
// its heal, with when the strike itself completed where that took time
// (a restart's node is down only until then).
func (w FaultWindow) Span(seconds func(int64) string) string {
	strike := ""
	if w.Struck > w.Start {
		strike = fmt.Sprintf(" (the strike took until %s)", seconds(w.Struck))
	}
	end := "healed at"
	if !w.Healed {
		end = "never healed; the history ended at"
	}
	return fmt.Sprintf("struck at %s%s, %s %s", seconds(w.Start), strike, end, seconds(w.End))
}

// Name reads like "isolate-primary(redis-1)", the form anomalies use.
func (w FaultWindow) Name() string {
	if w.Node == "" {
		return w.Fault
	}
	return w.Fault + "(" + w.Node + ")"
}

// FaultWindows finds the fault windows of a history, ordered by start.
//
// A fault-start that failed never took effect and opens no window; one that
// ended in info, or never completed, may have, so it does. Only a fault-end
// that completed ok closes a window: after a failed or unknown heal the fault
// may still be in effect. A fault-end without a Node heals every open window
// of that fault. Operations that carry a fault id pair by it alone, so two
// overlapping faults of one kind stay apart. Unlike history.Pair this never fails, so a report can show
// faults even for a history it cannot otherwise check.
func FaultWindows(ops []history.Op) []FaultWindow {
	return faultWindows(ops, historyEnd(ops))
}

// faultWindows finds the fault windows among ops (the nemesis's at least)
// of a history that ends at end.
func faultWindows(ops []history.Op, end int64) []FaultWindow {
	var ws []FaultWindow
	var failed []bool
	pending := map[string]int{} // fault instance -> window whose start has not completed
	instance := func(op history.Op) string { return op.Fault + " " + op.FaultID }
	for _, op := range ops {
		if op.Process != history.NemesisProcess {
			continue
		}
		switch {
		case op.F == history.FaultStart && op.Type == history.Invoke:
			pending[instance(op)] = len(ws)
			ws = append(ws, FaultWindow{Fault: op.Fault, ID: op.FaultID, Node: op.Node, Start: op.Time, Target: op.Target, Effects: history.EffectsOf(op), By: op.By})
			failed = append(failed, false)
		case op.F == history.FaultStart:
			key := instance(op)
			if op.FaultID == "" { // a completion that names no instance: the earliest open one
				key = ""
				for k, i := range pending {
					if ws[i].Fault == op.Fault && (key == "" || i < pending[key]) {
						key = k
					}
				}
			}
			i, ok := pending[key]
			if !ok {
				continue
			}
			delete(pending, key)
			if ws[i].Node == "" {
				ws[i].Node = op.Node
			}
			if op.Type == history.OK {
				ws[i].Struck = op.Time
			}
			failed[i] = op.Type == history.Fail
		case op.F == history.FaultEnd && op.Type == history.OK:
			for i := range ws {
				w := &ws[i]
				if w.Healed || failed[i] || w.Fault != op.Fault || (op.FaultID != "" && w.ID != op.FaultID) {
					continue
				}
				if op.FaultID == "" && op.Node != "" && w.Node != "" && op.Node != w.Node {
					continue
				}
				w.End, w.Healed = op.Time, true
			}
		}
	}
	out := make([]FaultWindow, 0, len(ws))
	for i, w := range ws {
		if failed[i] {
			continue
		}
		if !w.Healed {
			w.End = end
		}
		out = append(out, w)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// FaultsDuring names the windows that overlap the closed interval [a, b],
// each name once, in order of the windows' starts.
func FaultsDuring(ws []FaultWindow, a, b int64) []string {
	var names []string
	seen := map[string]bool{}
	for _, w := range ws {
		if w.Start > b || w.End < a {
			continue
		}
		if n := w.Name(); !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return names
}

// faultTroubles finds fault steps that did not complete ok: a start that
// failed or is unknown, a heal that failed, is unknown or never came, and a
// health check around a fault that did not pass: the fault's effect is
// then in doubt. The missed step invoked at history index explained is
// left out: the lock's evidence accounts for it (notApplicable).
func faultTroubles(pairs []history.Operation, explained int) []Anomaly {
	var out []Anomaly
	var starts []history.Operation // ok ones
	for _, p := range pairs {
		inv := p.Invoke
		if !inv.F.IsNemesis() || inv.F == history.PhaseF || inv.F.IsObserved() {
			continue
		}
		if inv.F == history.FaultMissed {
			if inv.Index == explained {
				continue
			}
			why := "no reason given"
			if p.Complete != nil && p.Complete.Error != "" {
				why = p.Complete.Error
			}
			out = append(out, faultTrouble(p, fmt.Sprintf("%s never struck: %s", missedName(inv), why)))
			continue
		}
		if p.Outcome() == history.OK {
			if inv.F == history.FaultStart {
				starts = append(starts, p)
			}
			continue
		}
		var what string
		switch inv.F {
		case history.FaultStart:
			what = "the start of " + faultName(inv)
		case history.FaultEnd:
			what = "the heal of " + faultName(inv)
		case history.HealthBefore:
			what = "the health check before the faults of " + faultName(inv)
		case history.HealthAfter:
			what = "the health check after " + faultName(inv) + " was healed"
		}
		out = append(out, faultTrouble(p, fmt.Sprintf("%s ended %s", what, outcomeText(p))))
	}
	for _, p := range starts {
		inv := p.Invoke
		if !healed(pairs, inv) {
			out = append(out, faultTrouble(p, fmt.Sprintf("%s started and was never healed", faultName(inv))))
		}
	}
	return out
}

// healed reports an ok heal of start's instance after it; a heal that
// names no instance or node heals every one of its fault, as older
// histories and fault-wide heals write them.
func healed(pairs []history.Operation, start history.Op) bool {
	for _, p := range pairs {
		inv := p.Invoke
		if inv.F == history.FaultEnd && p.Outcome() == history.OK && inv.Fault == start.Fault && inv.Index > start.Index &&
			(inv.FaultID == "" || inv.FaultID == start.FaultID) && (inv.Node == "" || inv.Node == start.Node) {
			return true
		}
	}
	return false
}

func faultTrouble(p history.Operation, text string) Anomaly {
	return Anomaly{Kind: KindFaultFailed, At: p.Invoke.Time, Text: text}
}

// missedName names a step that never struck: the nemesis describes it in
// Node ("step 2: restart on node:redis-3 at client 0's grant of k0").
func missedName(op history.Op) string {
	if op.Node != "" {
		return op.Node
	}
	return "a step of fault " + op.Fault
}

func faultName(op history.Op) string {
	return FaultWindow{Fault: op.Fault, Node: op.Node}.Name()
}

func outcomeText(p history.Operation) string {
	switch {
	case p.Complete == nil:
		return "without a reply before the history ended"
	case p.Complete.Error != "":
		return fmt.Sprintf("%s: %s", p.Outcome(), p.Complete.Error)
	}
	return string(p.Outcome())
}
