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
	require.Equal(t, "failover-simple 16s + running on 1s, 6 ops, 3 acquires, faults: none", p.Line(start.Add(17*time.Second)),
		"past its time with nothing to heal, the workload runs on")

	// A fault whose start failed never took effect.
	p.Add([]history.Op{
		{Index: len(ops), Process: history.NemesisProcess, Type: history.Invoke, F: history.FaultStart, Fault: "kill", FaultID: "f9", Node: "redis-2"},
		{Index: len(ops) + 1, Process: history.NemesisProcess, Type: history.Fail, F: history.FaultStart, Fault: "kill", FaultID: "f9", Node: "redis-2"},
	})
	require.Contains(t, p.Line(start), "faults: none")
}

// mark is a phase mark at ms milliseconds of history time.
func mark(i int, ph history.Phase, at int64) []history.Op {
	return []history.Op{
		{Index: i, Process: history.NemesisProcess, Type: history.Invoke, F: history.PhaseF, Phase: ph, Time: ms(at)},
		{Index: i + 1, Process: history.NemesisProcess, Type: history.OK, F: history.PhaseF, Phase: ph, Time: ms(at)},
	}
}

// Past the fault phase the line says when the phase under way began and
// how far it is, never the time since the start over the fault phase's
// length as if the run were overdue ("25s/20s (settle)").
func TestProgressPastTheFaultPhaseShowsThePhasesOwnProgress(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	// The history's clock started 500ms before the workload.
	p := NewProgress("failover-simple", start, 20*time.Second)
	p.Settle, p.Origin = 10*time.Second, ms(500)
	p.Add(mark(0, history.PhaseFaults, 700))
	p.Add([]history.Op{{Index: 2, Process: history.NemesisProcess, Type: history.Invoke, F: history.FaultStart, Fault: "isolate-primary", FaultID: "f1", Node: "redis-1"}})
	require.Equal(t, "failover-simple 12s/20s (8s left), 0 ops, 0 acquires, faults: isolate-primary(redis-1)", p.Line(at(12.4)))
	require.Equal(t, "failover-simple 20s + faults healing 1s, 0 ops, 0 acquires, faults: isolate-primary(redis-1)", p.Line(at(21.2)),
		"over its time, a fault still in effect is healing")

	p.Add(mark(3, history.PhaseHeal, 21_500)) // 21s into the workload
	require.Equal(t, "failover-simple 21s + heal 2s, 0 ops, 0 acquires, faults: isolate-primary(redis-1)", p.Line(at(23.1)))
	p.Add([]history.Op{{Index: 5, Process: history.NemesisProcess, Type: history.OK, F: history.FaultEnd, Fault: "isolate-primary", FaultID: "f1", Node: "redis-1"}})
	p.Add(mark(6, history.PhaseConvergence, 23_500))
	require.Equal(t, "failover-simple 23s + convergence 1s, 0 ops, 0 acquires, faults: none", p.Line(at(24.5)))
	p.Add(mark(8, history.PhaseSettle, 25_500)) // 25s in
	require.Equal(t, "failover-simple 25s + settle 5s/10s, 0 ops, 0 acquires, faults: none", p.Line(at(30.2)),
		"the settle's own progress, not 30s/20s")
	require.Equal(t, "failover-simple 25s + settle 10s + running on 2s, 0 ops, 0 acquires, faults: none", p.Line(at(37.1)),
		"a settle that ended with too few grants runs on")
	p.Add(mark(10, history.PhaseEnd, 38_500))
	require.Equal(t, "failover-simple 38s + end 0s, 0 ops, 0 acquires, faults: none", p.Line(at(38.2)))

	// A nemesis that finished early settles until the fault phase's end
	// at least: 16s of settle from 4s in, not 10s.
	q := NewProgress("pause-simple", start, 20*time.Second)
	q.Settle = 10 * time.Second
	q.Add(mark(0, history.PhaseFaults, 0))
	q.Add(mark(2, history.PhaseHeal, 3000))
	q.Add(mark(4, history.PhaseConvergence, 3500))
	q.Add(mark(6, history.PhaseSettle, 4000))
	require.Equal(t, "pause-simple 4s + settle 2s/16s, 0 ops, 0 acquires, faults: none", q.Line(at(6)))
}
