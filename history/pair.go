package history

import (
	"fmt"
	"strings"

	"github.com/deadbolt-lab/deadbolt/internal/dense"
)

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
// (by fault name in histories written before instances had ids). Each
// Complete points into ops.
func Pair(ops []Op) ([]Operation, error) {
	var out []Operation
	var p Pairer
	for i := range ops {
		n, err := p.Add(&ops[i])
		switch {
		case err != nil:
			return nil, err
		case ops[i].Type == Invoke:
			out = append(out, Operation{Invoke: ops[i]})
		default:
			out[n].Complete = &ops[i]
		}
	}
	return out, nil
}

// Pairer pairs operations one at a time, as Pair does, for readers that
// stream a history rather than hold it.
type Pairer struct {
	// procs are the open operations of processes other than the
	// nemesis's, one each; nemesis those of fault instances.
	procs   dense.Map[openOp]
	nemesis map[pairKey]openOp
	n       int
}

// pairKey is what a completion is matched by: its process, or for the
// nemesis its fault instance and step.
type pairKey struct {
	process        int
	fault, faultID string
	f              F
}

// openOp is what a completion is checked against: a few fields of its
// invocation, not all of it.
type openOp struct {
	n, index   int
	time       int64
	f          F
	key, lease string
}

func keyOf(op *Op) pairKey {
	if op.Process == NemesisProcess {
		return pairKey{process: op.Process, fault: op.Fault, faultID: op.FaultID, f: op.F}
	}
	return pairKey{process: op.Process}
}

func (k pairKey) String() string {
	switch k.process {
	case NemesisProcess:
		if k.fault == "" {
			return fmt.Sprintf("the nemesis's %s", k.f)
		}
		return fmt.Sprintf("the nemesis's %s of %s", k.f, strings.TrimSpace(k.fault+" "+k.faultID))
	case HarnessProcess:
		return "the harness"
	}
	return fmt.Sprintf("process %d", k.process)
}

// Add takes the next operation of the history. An invocation starts
// operation n (operations are numbered in invocation order from 0, as
// Pair's result is); a completion returns the n of the invocation it
// completes.
func (p *Pairer) Add(op *Op) (n int, err error) {
	if op.Process == NemesisProcess {
		return p.addNemesis(op)
	}
	if op.Type == Invoke {
		if o := p.procs.Ptr(op.Process); o != nil {
			return 0, fmt.Errorf("op %d: %s invoked again while op %d is open", op.Index, keyOf(op), o.index)
		}
		n = p.next()
		p.procs.Set(op.Process, openOp{n: n, index: op.Index, time: op.Time, f: op.F, key: op.Key, lease: op.Lease})
		return n, nil
	}
	o := p.procs.Ptr(op.Process)
	if o == nil {
		return 0, fmt.Errorf("op %d: %s completes an operation that was never invoked", op.Index, keyOf(op))
	}
	if err := o.completedBy(op); err != nil {
		return 0, err
	}
	n = o.n
	p.procs.Delete(op.Process)
	return n, nil
}

// next numbers an invocation.
func (p *Pairer) next() int {
	p.n++
	return p.n - 1
}

func (p *Pairer) addNemesis(op *Op) (n int, err error) {
	if p.nemesis == nil {
		p.nemesis = map[pairKey]openOp{}
	}
	id := keyOf(op)
	if op.Type == Invoke {
		if o, ok := p.nemesis[id]; ok {
			return 0, fmt.Errorf("op %d: %s invoked again while op %d is open", op.Index, id, o.index)
		}
		n = p.next()
		p.nemesis[id] = openOp{n: n, index: op.Index, time: op.Time, f: op.F, key: op.Key, lease: op.Lease}
		return n, nil
	}
	o, ok := p.nemesis[id]
	if !ok && op.FaultID == "" {
		id, o, ok = p.openInstance(op)
	}
	if !ok {
		return 0, fmt.Errorf("op %d: %s completes an operation that was never invoked", op.Index, id)
	}
	if err := o.completedBy(op); err != nil {
		return 0, err
	}
	delete(p.nemesis, id)
	return o.n, nil
}

// completedBy checks that op may complete o.
func (o *openOp) completedBy(op *Op) error {
	if o.f != op.F || o.key != op.Key || o.lease != op.Lease {
		return fmt.Errorf("op %d: completion %s %q %s does not match invocation %d (%s %q %s)", op.Index, op.F, op.Key, op.Lease, o.index, o.f, o.key, o.lease)
	}
	if op.Time < o.time {
		return fmt.Errorf("op %d: completes at %d, before its invocation %d at %d", op.Index, op.Time, o.index, o.time)
	}
	return nil
}

// openInstance finds the earliest open instance of op's fault, for a
// completion that names the fault but not the instance.
func (p *Pairer) openInstance(op *Op) (pairKey, openOp, bool) {
	var best pairKey
	var found openOp
	ok := false
	for id, o := range p.nemesis {
		if id.process == NemesisProcess && id.fault == op.Fault && o.f == op.F && (!ok || o.n < found.n) {
			best, found, ok = id, o, true
		}
	}
	return best, found, ok
}
