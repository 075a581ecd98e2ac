package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
)

// Live is a run whose workload is under way, for a progress display: the
// display reads the recorder and never writes to it.
type Live struct {
	Scenario string
	// Started is when the workload started; Time how long its fault
	// phase runs; Settle how long it runs on once the cluster agrees again
	// (at least to the end of Time).
	Started time.Time
	Time    time.Duration
	Settle  time.Duration
	Rec     *history.Recorder
}

// watch hands the run to o.Progress, if any, and returns what ends it.
func (o RunOptions) watch(l Live) (done func()) {
	if o.Progress == nil {
		return func() {}
	}
	return o.Progress(l)
}
