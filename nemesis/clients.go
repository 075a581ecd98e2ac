package nemesis

import (
	"context"

	"github.com/deadbolt-lab/deadbolt/workloads/moment"
)

// Clients is what the schedules and faults ask of the workload's client
// processes: its gates, its moments and its processes (package moment).
// *workloads.Runner is the real one; a test may hand in its own.
type Clients interface {
	// Begin and HoldStart open and close the gate every first acquire
	// waits at; Reserve, Admit and Open gate one key (workloads' gates).
	Begin()
	HoldStart()
	Reserve(key string)
	Admit(key string, slot int)
	Open(key string)
	// Catch waits for a moment of the workload and holds its client there.
	Catch(ctx context.Context, m moment.Moment) (*moment.Caught, error)
	// CatchSend waits for a request in flight that an aim matches.
	CatchSend(ctx context.Context, a moment.Aim) (*moment.Sending, error)
	// WatchStops delivers the clients' stops at armed points until cancel.
	WatchStops() (<-chan moment.Stop, func())
	// Quiet waits until proc has no request in flight.
	Quiet(ctx context.Context, proc moment.Process) error
	// WaitClient is slot n's current process, once it has one.
	WaitClient(ctx context.Context, n int) (int, moment.Process, error)
	// Slots is how many client slots the run has.
	Slots() int
}
