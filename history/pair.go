package history

import "fmt"

// Operation is an invocation with its completion. Complete is nil when the
// history ended before the operation did: its outcome is unknown, as for info.
type Operation struct {
	Invoke   Op
	Complete *Op
}

// Outcome is the completion's type, Info when there is none.
func (o Operation) Outcome() Type {
	if o.Complete == nil {
		return Info
	}
	return o.Complete.Type
}

// Pair matches each invocation with the next completion of the same process,
// in invocation order. Nemesis operations are paired by fault instance
// (by fault name in histories written before instances had ids).
func Pair(ops []Op) ([]Operation, error) {
	var out []Operation
	open := map[string]int{} // process or fault -> index into out
	for _, op := range ops {
		id := fmt.Sprint(op.Process)
		if op.Process == NemesisProcess {
			id = "nemesis " + op.Fault + " " + op.FaultID + " " + string(op.F)
		}
		if op.Type == Invoke {
			if i, ok := open[id]; ok {
				return nil, fmt.Errorf("op %d: %s invoked again while op %d is open", op.Index, id, out[i].Invoke.Index)
			}
			open[id] = len(out)
			out = append(out, Operation{Invoke: op})
			continue
		}
		i, ok := open[id]
		if !ok && op.Process == NemesisProcess && op.FaultID == "" {
			id, i, ok = openInstance(open, out, op)
		}
		if !ok {
			return nil, fmt.Errorf("op %d: %s completes an operation that was never invoked", op.Index, id)
		}
		inv := out[i].Invoke
		if inv.F != op.F || inv.Key != op.Key || inv.Lease != op.Lease {
			return nil, fmt.Errorf("op %d: completion %s %q %s does not match invocation %d (%s %q %s)", op.Index, op.F, op.Key, op.Lease, inv.Index, inv.F, inv.Key, inv.Lease)
		}
		if op.Time < inv.Time {
			return nil, fmt.Errorf("op %d: completes at %d, before its invocation %d at %d", op.Index, op.Time, inv.Index, inv.Time)
		}
		c := op
		out[i].Complete = &c
		delete(open, id)
	}
	return out, nil
}

// openInstance finds the earliest open instance of op's fault, for a
// completion that names the fault but not the instance.
func openInstance(open map[string]int, out []Operation, op Op) (string, int, bool) {
	best, bestID := -1, ""
	for id, i := range open {
		inv := out[i].Invoke
		if inv.Process == NemesisProcess && inv.Fault == op.Fault && inv.F == op.F && (best < 0 || i < best) {
			best, bestID = i, id
		}
	}
	return bestID, best, best >= 0
}
