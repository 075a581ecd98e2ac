package checker

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

func TestFaultWindows(t *testing.T) {
	ops := newHistory().
		fault("isolate-primary", "redis-1", ms(100), ms(300)).
		fault("kill-minority", "redis-2", ms(200), -1). // never healed
		acquireAs(history.Fail, 1, "k", "a", ms(400), ms(500), ms(1000)).
		build()

	ws := FaultWindows(ops)
	require.Equal(t, []FaultWindow{
		{Fault: "isolate-primary", Node: "redis-1", Start: ms(100), Struck: ms(100), End: ms(300), Healed: true, Effects: history.Legacy["isolate-primary"]},
		{Fault: "kill-minority", Node: "redis-2", Start: ms(200), Struck: ms(200), End: ms(500)},
	}, ws)

	assert.Equal(t, []string{"isolate-primary(redis-1)"}, FaultsDuring(ws, ms(0), ms(150)))
	assert.Equal(t, []string{"isolate-primary(redis-1)", "kill-minority(redis-2)"}, FaultsDuring(ws, ms(250), ms(260)))
	// Closed intervals: touching the heal still counts.
	assert.Equal(t, []string{"isolate-primary(redis-1)", "kill-minority(redis-2)"}, FaultsDuring(ws, ms(300), ms(310)))
	assert.Equal(t, []string{"kill-minority(redis-2)"}, FaultsDuring(ws, ms(301), ms(310)))
	assert.Empty(t, FaultsDuring(ws, ms(0), ms(99)))
}

func TestFaultWindowsFailedStartAndUnknownHeal(t *testing.T) {
	n := history.NemesisProcess
	ops := newHistory().
		// A fault that certainly did not start opens no window.
		call(history.Op{Time: ms(10), Process: n, F: history.FaultStart, Fault: "kill-primary", Node: "redis-1"}, history.Fail, ms(20), nil).
		// A pause whose heal ended in info may still be in effect.
		call(history.Op{Time: ms(30), Process: n, F: history.FaultStart, Fault: "pause", Node: "redis-2"}, history.Info, ms(40), nil).
		call(history.Op{Time: ms(50), Process: n, F: history.FaultEnd, Fault: "pause", Node: "redis-2"}, history.Info, ms(60), nil).
		// A heal without a node heals every window of that fault.
		fault("isolate", "redis-3", ms(70), -1).
		call(history.Op{Time: ms(80), Process: n, F: history.FaultEnd, Fault: "isolate"}, history.OK, ms(90), nil).
		call(history.Op{Time: ms(100), Process: n, F: history.FaultEnd, Fault: "pause", Node: "redis-2"}, history.OK, ms(110), nil).
		build()

	require.Equal(t, []FaultWindow{
		{Fault: "pause", Node: "redis-2", Start: ms(30), End: ms(110), Healed: true}, // struck in info: when is unknown
		{Fault: "isolate", Node: "redis-3", Start: ms(70), Struck: ms(70), End: ms(90), Healed: true},
	}, FaultWindows(ops))
	assert.Equal(t, "isolate", FaultWindow{Fault: "isolate"}.Name())
}

// Two instances of one fault that overlap keep their own windows: each heal
// closes only its own instance, whatever node it names.
func TestOverlappingFaultsOfOneKindPairByInstance(t *testing.T) {
	n := history.NemesisProcess
	op := func(at int64, f history.F, id string) history.Op {
		return history.Op{Time: at, Process: n, F: f, Fault: "pause-client", FaultID: id}
	}
	ops := newHistory().
		call(op(ms(10), history.FaultStart, "f0"), history.OK, ms(20), nil).
		call(op(ms(30), history.FaultStart, "f2"), history.OK, ms(40), nil).
		call(op(ms(50), history.FaultEnd, "f2"), history.OK, ms(60), nil).
		call(op(ms(70), history.FaultEnd, "f0"), history.OK, ms(80), nil).
		build()
	require.Equal(t, []FaultWindow{
		{Fault: "pause-client", ID: "f0", Start: ms(10), Struck: ms(20), End: ms(80), Healed: true, Effects: history.Legacy["pause-client"]},
		{Fault: "pause-client", ID: "f2", Start: ms(30), Struck: ms(40), End: ms(60), Healed: true, Effects: history.Legacy["pause-client"]},
	}, FaultWindows(ops))
}

// A restart's node is down only while the strike runs (kill, then start
// again); its window lasts to the step's heal. The span says both.
func TestFaultSpanSaysWhenTheStrikeEnded(t *testing.T) {
	n := history.NemesisProcess
	ops := newHistory().
		call(history.Op{Time: ms(500), Process: n, F: history.FaultStart, Fault: "restart", Node: "redis-3"}, history.OK, ms(900), nil).
		call(history.Op{Time: ms(12000), Process: n, F: history.FaultEnd, Fault: "restart", Node: "redis-3"}, history.OK, ms(12000), nil).
		fault("pause-node", "redis-2", ms(100), -1).
		build()
	ws := FaultWindows(ops)
	require.Len(t, ws, 2)
	secs := func(ns int64) string { return fmt.Sprintf("%.1fs", float64(ns)/1e9) }
	assert.Equal(t, "struck at 0.1s, never healed; the history ended at 12.0s", ws[0].Span(secs))
	assert.Equal(t, "struck at 0.5s (the strike took until 0.9s), healed at 12.0s", ws[1].Span(secs))
}
