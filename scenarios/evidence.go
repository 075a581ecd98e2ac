package scenarios

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/reports"
)

// runOnFor keeps the workload going past its settle while it has fewer
// than min ok acquires, up to bound, and says how long it ran on: the
// evidence a verdict needs comes by construction, not by the clock of a
// loaded machine, and a run still short of it past the bound is unknown
// (the checker says how many were asked and refused). quit ends it early.
func runOnFor(rec *history.Recorder, min int, bound time.Duration, quit <-chan struct{}) time.Duration {
	grants := reports.NewProgress("", time.Time{}, 0) // counts the clients' ok acquires
	count := func() int {
		grants.Add(rec.OpsFrom(grants.Next()))
		return grants.Acquires()
	}
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for count() < min && time.Since(start) < bound {
		select {
		case <-tick.C:
		case <-quit:
			return time.Since(start)
		}
	}
	return time.Since(start)
}
