package reports

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

func TestProgressCountsAndFollowsTheFaults(t *testing.T) {
	ops := doubleHold()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := NewProgress("failover-simple", start, 16*time.Second)
	// Up to 1.2s: three acquires done (the only completions), the pause and
	// the isolation on.
	var first, rest []history.Op
	for _, op := range ops {
		if op.Time <= ms(1200) {
			first = append(first, op)
		} else {
			rest = append(rest, op)
		}
	}
	p.Add(first)
	require.Equal(t, len(first), p.Next())
	require.Equal(t, "failover-simple 5s/16s (11s left), 3 ops, 3 acquires, faults: pause-client(process 2), isolate-primary(redis-1)",
		p.Line(start.Add(5*time.Second+300*time.Millisecond)))
	p.Add(rest)
	require.Equal(t, len(ops), p.Next())
	require.Equal(t, "failover-simple 17s/16s (workload done), 6 ops, 3 acquires, faults: none", p.Line(start.Add(17*time.Second)))

	// A fault whose start failed never took effect.
	p.Add([]history.Op{
		{Index: len(ops), Process: history.NemesisProcess, Type: history.Invoke, F: history.FaultStart, Fault: "kill", FaultID: "f9", Node: "redis-2"},
		{Index: len(ops) + 1, Process: history.NemesisProcess, Type: history.Fail, F: history.FaultStart, Fault: "kill", FaultID: "f9", Node: "redis-2"},
	})
	require.Contains(t, p.Line(start), "faults: none")
}
