package nemesis

import "github.com/deadbolt-lab/deadbolt/history"

// Effects say what a fault does to the lock service, declared with it
// (FaultDecl.Effects) and recorded on each fault-start (history.Effects).
type Effects = history.Effects

// Inside reports the client operation a fault strikes inside (acquire,
// release, renew: an extend or re-acquire), and whether it kills the
// client there rather than stopping it; ok is false for a fault that
// strikes no operation of its own choosing.
func Inside(fault string) (op history.F, kills, ok bool) {
	f, ok := faults[fault].fault.(inOp)
	return f.op, f.crash, ok
}
