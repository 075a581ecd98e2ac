// Package moment declares what a running workload offers the faults aimed
// at it: the moments a fault waits for, the clients it catches there, and
// the client processes it then strikes. The workload runner makes them and
// the nemesis takes them; they live apart from both so that the nemesis
// needs neither the runner's Redis clients nor the client protocol's
// locks, and the runner needs no fault.
package moment

import "github.com/deadbolt-lab/deadbolt/history"

// AnySlot stands for every client slot: in a Moment or an Aim, any
// client's; at a gate, every client admitted.
const AnySlot = -1

// Moment is a workload event a fault is aimed at: an ok acquire of Key,
// or an ok read of the resource under a lease of Key (inside the critical
// section, before the write), by client slot Slot (AnySlot: any client).
type Moment struct {
	Key  string
	On   history.F // history.Acquire (the default) or history.Read
	Slot int
	// Asked takes an acquire of Key that ended in any outcome (a refusal,
	// an error): the moment is that the client asked, not that it got.
	Asked bool
}
