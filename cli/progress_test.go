package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// live is a run with two ok acquires and an isolation under way.
func live(start time.Time) scenarios.Live {
	rec := history.NewRecorder(nil)
	for _, p := range []int{0, 1} {
		rec.Record(history.Op{Type: history.Invoke, Process: p, F: history.Acquire, Key: "k", Lease: "l", TTL: 1})
		rec.Record(history.Op{Type: history.OK, Process: p, F: history.Acquire, Key: "k", Lease: "l", Owner: "o", TTL: 1})
	}
	rec.Record(history.Op{Type: history.Invoke, Process: history.NemesisProcess, F: history.FaultStart, Fault: "isolate-primary", Node: "redis-1"})
	return scenarios.Live{Scenario: "failover-simple", Started: start, Time: 16 * time.Second, Rec: rec}
}

func TestTerminalGetsOneLineRedrawnInPlace(t *testing.T) {
	var w bytes.Buffer
	s := newStatusTo(&w, true, func() int { return 200 })
	start := time.Now()
	done := s.watch(live(start))
	s.tick(start.Add(5 * time.Second))
	require.Equal(t, "failover-simple 5s/16s (11s left), 2 ops, 2 acquires, faults: isolate-primary(redis-1)", w.String())
	w.Reset()
	s.tick(start.Add(6 * time.Second))
	require.True(t, strings.HasPrefix(w.String(), "\r\x1b[Kfailover-simple 6s/16s"), "the line is erased and redrawn: %q", w.String())
	require.NotContains(t, w.String(), "\n")

	// A log line goes above the live line, which comes back under it.
	w.Reset()
	s.logf("%s: healing", "failover-simple")
	require.True(t, strings.HasPrefix(w.String(), "\r\x1b[Kfailover-simple: healing\nfailover-simple "), "%q", w.String())

	// The workload's end takes its line away.
	w.Reset()
	done()
	require.Equal(t, "\r\x1b[K", w.String())
	w.Reset()
	s.tick(start.Add(7 * time.Second))
	require.Empty(t, w.String())
}

func TestTerminalLineFitsTheWidth(t *testing.T) {
	var w bytes.Buffer
	s := newStatusTo(&w, true, func() int { return 30 })
	start := time.Now()
	s.watch(live(start))
	s.tick(start.Add(time.Second))
	require.Equal(t, "failover-simple 1s/16s (15s l", w.String(), "one column short of the width, so \\r returns to its start")
}

func TestNotATerminalGetsPlainLinesNowAndThen(t *testing.T) {
	var w bytes.Buffer
	s := newStatusTo(&w, false, nil)
	start := time.Now()
	s.watch(live(start))
	s.tick(start.Add(time.Second))
	require.Equal(t, "progress: failover-simple 1s/16s (15s left), 2 ops, 2 acquires, faults: isolate-primary(redis-1)\n", w.String())
	w.Reset()
	s.tick(start.Add(5 * time.Second))
	require.Empty(t, w.String(), "not every second in a log")
	s.tick(start.Add(12 * time.Second))
	require.Equal(t, "progress: failover-simple 12s/16s (4s left), 2 ops, 2 acquires, faults: isolate-primary(redis-1)\n", w.String())
	w.Reset()
	s.logf("plain %d", 1)
	require.Equal(t, "plain 1\n", w.String(), "no escape codes outside a terminal")
}

// The line places the run's phase marks on the workload's clock (the
// recorder's started before it) and knows the settle's length.
func TestTheLineFollowsThePhasesOnTheWorkloadsClock(t *testing.T) {
	var w bytes.Buffer
	s := newStatusTo(&w, false, nil)
	start := time.Now().Add(-10 * time.Second) // the workload began 10s before the recorder
	l := live(start)
	l.Time, l.Settle = 2*time.Second, 4*time.Second
	l.Rec.Mark(history.PhaseFaults)
	l.Rec.Mark(history.PhaseSettle)
	s.watch(l)
	s.tick(start.Add(13*time.Second + 500*time.Millisecond))
	require.Equal(t, "progress: failover-simple 10s + settle 3s/4s, 2 ops, 2 acquires, faults: isolate-primary(redis-1)\n", w.String())
}
