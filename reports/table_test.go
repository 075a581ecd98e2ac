package reports

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/history"
)

// results checks a small real history: a and b overlap on k during an
// isolation, and b's write erases a's increment.
func results(t *testing.T) *Results {
	t.Helper()
	var ops []history.Op
	add := func(op history.Op) { op.Index = len(ops); ops = append(ops, op) }
	pair := func(op history.Op, at, done int64, fill func(*history.Op)) {
		op.Type, op.Time = history.Invoke, at
		add(op)
		c := op
		c.Type, c.Time, c.Value = history.OK, done, nil
		if op.F == history.Write {
			c.Value = nil
		}
		if fill != nil {
			fill(&c)
		}
		add(c)
	}
	nem := history.Op{Process: history.NemesisProcess, Fault: "isolate-primary", Node: "redis-1"}
	s, e := nem, nem
	s.F, e.F = history.FaultStart, history.FaultEnd
	pair(history.Op{Process: history.HarnessProcess, F: history.Write, Key: "k", Value: history.Int(0)}, 0, 1, nil)
	pair(s, 2e9, 2e9, nil)
	pair(history.Op{Process: 3, F: history.Acquire, Key: "k", Lease: "p3.1", TTL: 10e9}, 3e9, 3.1e9, nil)
	pair(history.Op{Process: 4, F: history.Acquire, Key: "k", Lease: "p4.1", TTL: 10e9}, 5e9, 5.2e9, nil)
	pair(history.Op{Process: 3, F: history.Read, Key: "k", Lease: "p3.1"}, 5.3e9, 5.3e9, func(c *history.Op) { c.Value = history.Int(0) })
	pair(history.Op{Process: 4, F: history.Read, Key: "k", Lease: "p4.1"}, 5.4e9, 5.4e9, func(c *history.Op) { c.Value = history.Int(0) })
	pair(history.Op{Process: 3, F: history.Write, Key: "k", Lease: "p3.1", Value: history.Int(1)}, 5.5e9, 5.5e9, func(c *history.Op) { c.Prev = history.Int(0) })
	pair(history.Op{Process: 4, F: history.Write, Key: "k", Lease: "p4.1", Value: history.Int(1)}, 5.6e9, 5.6e9, func(c *history.Op) { c.Prev = history.Int(1) })
	pair(e, 11e9, 11e9, nil)
	pair(history.Op{Process: history.HarnessProcess, F: history.Read, Key: "k"}, 12e9, 12e9, func(c *history.Op) { c.Value = history.Int(1) })
	rep := checker.Check(ops, checker.Options{Checkers: []string{"double-holds", "lost-updates", "fencing"}})
	require.Equal(t, checker.Invalid, rep.Verdict, rep.Reason)
	r := &Results{Scenario: "failover-simple", Lock: "simple", Workload: "counter", Seed: 7, Expected: "unsafe", Dir: "store/x"}
	r.SetCheck(rep, true)
	return r
}

func TestTableAndEvidence(t *testing.T) {
	unsafe := results(t)
	safe := &Results{Scenario: "failover-redlock", Workload: "mutex", Expected: "safe", Verdict: "invalid", Matches: false}
	var b bytes.Buffer
	require.NoError(t, Table(&b, []*Results{unsafe, safe}))
	require.Regexp(t, `failover-simple\s+simple\s+counter .* 1\s+1 lost update, no fencing\s+unsafe\s+invalid\s+PASS`, b.String())
	require.Regexp(t, `failover-redlock .*-\s+safe\s+invalid\s+FAIL`, b.String())

	lines := FirstOfEach(unsafe, 3)
	require.Len(t, lines, 2)
	require.Contains(t, lines[0], "first double-hold: double hold on key \"k\": process 3 (lease p3.1")
	require.Contains(t, lines[0], "during isolate-primary(redis-1)")
	require.Contains(t, lines[1], "first lost-update: key \"k\": process 4 (lease p4.1) read 0")
	require.Empty(t, FirstOfEach(safe, 3))
}

func TestMarkdownNamesTheEvidence(t *testing.T) {
	r := results(t)
	md := Markdown(r)
	require.Contains(t, md, "**Verdict: invalid**, expected unsafe: the result matches")
	require.Contains(t, md, "- isolate-primary(redis-1): struck at t+2.000s, healed at t+11.000s")
	require.Contains(t, md, "| double-holds | invalid |")
	require.Contains(t, md, "| fencing | not applicable | no fencing")
	require.Contains(t, md, "- lost-update at t+5.600s: key \"k\"")
	require.Contains(t, md, "| damage | 1 lost update, no fencing |")
	require.Contains(t, md, "deadbolt run failover-simple --seed 7")
	r.Matches = false
	require.Contains(t, Markdown(r), "does NOT match")
}

// The damage column takes what a result says of itself, whichever checker
// (one registered outside deadbolt too) wrote it.
func TestDamageTakesWhatAResultDeclares(t *testing.T) {
	r := &Results{Checks: []checker.Result{
		{Checker: "audit-trail", Verdict: checker.Valid, Damage: "no audit trail"},
		{Checker: "fencing", Verdict: checker.Valid, Applicable: false},
	}}
	require.Equal(t, "no audit trail", Damage(r))
}
