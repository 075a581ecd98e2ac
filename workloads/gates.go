package workloads

import (
	"sync"

	"github.com/deadbolt-lab/deadbolt/workloads/moment"
)

// gates decide which clients may start an acquire, so that a fault aimed
// at one client's grant gets that grant whatever the machine's scheduling:
// the run holds its first acquire back until the faults that must come
// first have struck, and a key reserved for a fault stays closed until
// its turn, then admits only the slot the fault is aimed at, then opens.
// When a key is admitted, the next acquire an admitted client starts asks
// for it, whatever key the workload drew: a client that blocks in its
// lock's acquire of another key would otherwise leave the fault waiting
// for a key nobody asks for.
// Nothing here touches the lock: a client waiting at a gate simply has not
// asked yet, as a real client that came later would not have.
type gates struct {
	mu sync.Mutex
	// changed is closed (and replaced) whenever a gate moves.
	changed chan struct{}
	// held keeps every acquire back until begin.
	held bool
	// admit is, per reserved key, the slot that may acquire it now:
	// closed (no entry is open; closedGate is closed), one slot, or moment.AnySlot.
	admit map[string]int
	// steer is, per admitted key, whether the next acquire an admitted
	// client starts still goes to it.
	steer map[string]bool
}

// closedGate admits nobody.
const closedGate = -2

func newGates() *gates {
	return &gates{changed: make(chan struct{}), admit: map[string]int{}, steer: map[string]bool{}}
}

// move changes the gates under g.mu and wakes every waiter.
func (g *gates) move(f func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f()
	close(g.changed)
	g.changed = make(chan struct{})
}

// pass waits until slot may acquire key, or until stop or done closes
// (false).
func (g *gates) pass(slot int, key string, stop, done <-chan struct{}) bool {
	for {
		g.mu.Lock()
		admit, reserved := g.admit[key]
		ok := !g.held && (!reserved || admit == moment.AnySlot || admit == slot)
		changed := g.changed
		g.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-changed:
		case <-stop:
			return false
		case <-done:
			return false
		}
	}
}

// steered returns the admitted key slot's next acquire goes to instead
// of drawn, once per admission, among keys (the workload's own).
func (g *gates) steered(slot int, drawn string, keys []string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range keys {
		if admit := g.admit[k]; g.steer[k] && (admit == moment.AnySlot || admit == slot) {
			delete(g.steer, k)
			return k
		}
	}
	return drawn
}

// HoldStart keeps every client's first acquire back until Begin: faults
// that must be in effect from the first acquire (a partition for the whole
// run) strike in between. Call it before Run.
func (r *Runner) HoldStart() { r.gates.move(func() { r.gates.held = true }) }

// Begin lets the clients acquire. It is safe to call more than once.
func (r *Runner) Begin() { r.gates.move(func() { r.gates.held = false }) }

// Reserve closes key to every client until Admit or Open: a fault waits
// for a grant of it that must not go to another client first. Call it
// before Run.
func (r *Runner) Reserve(key string) { r.gates.move(func() { r.gates.admit[key] = closedGate }) }

// Admit lets only client slot (moment.AnySlot: every client) acquire a
// reserved key, and sends that slot's next acquire to it.
func (r *Runner) Admit(key string, slot int) {
	r.gates.move(func() { r.gates.admit[key], r.gates.steer[key] = slot, true })
}

// Open lets every client acquire key again.
func (r *Runner) Open(key string) {
	r.gates.move(func() { delete(r.gates.admit, key); delete(r.gates.steer, key) })
}
