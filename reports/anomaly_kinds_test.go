package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/history"
)

// A kind of anomaly the reports have no special case for (the releases
// checker's) still shows in report.md, in the first-of-each lines and in
// the summary table.
func TestNewAnomalyKindsRender(t *testing.T) {
	ops := []history.Op{
		{Index: 0, Time: 1e6, Type: history.Invoke, Process: 0, F: history.Acquire, Key: "k", Lease: "a", TTL: 1e9},
		{Index: 1, Time: 2e6, Type: history.OK, Process: 0, F: history.Acquire, Key: "k", Lease: "a", Owner: "a", TTL: 1e9},
		{Index: 2, Time: 3e6, Type: history.Invoke, Process: 1, F: history.Release, Key: "k", Lease: "x", Owner: "x"},
		{Index: 3, Time: 4e6, Type: history.OK, Process: 1, F: history.Release, Key: "k", Lease: "x"},
	}
	rep := checker.Check(ops, checker.Options{Checkers: []string{"double-holds", "releases"}})
	require.Equal(t, checker.Invalid, rep.Verdict)
	r := &Results{Scenario: "s", Lock: "l", Workload: "mutex", Nemesis: "none", Expected: "safe", Dir: "d"}
	r.SetCheck(rep, false)

	md := Markdown(r)
	require.Contains(t, md, "- "+checker.KindReleaseNotHeld+" at t+0.003s: process 1 released lease x")
	require.Contains(t, md, "| releases | invalid |")
	first := strings.Join(FirstOfEach(r, 5), "\n")
	require.Contains(t, first, "first "+checker.KindReleaseNotHeld+": ")
	var b bytes.Buffer
	require.NoError(t, Table(&b, []*Results{r}))
	require.Regexp(t, `s\s+l\s+mutex\s+none\s+0\s+1\s+0\s+-\s+safe\s+invalid\s+FAIL`, b.String())
}

// A queue jump (the fairness checker's) is named in the damage column and
// in report.md.
func TestQueueJumpIsDamage(t *testing.T) {
	acq := func(p int, lease string, inv, queued, done int64) []history.Op {
		return []history.Op{
			{Time: inv, Type: history.Invoke, Process: p, F: history.Acquire, Key: "k", Lease: lease, TTL: 5e9},
			{Time: done, Type: history.OK, Process: p, F: history.Acquire, Key: "k", Lease: lease, Owner: lease, TTL: 5e9, Queued: queued},
		}
	}
	rel := func(p int, lease string, inv int64) []history.Op {
		return []history.Op{
			{Time: inv, Type: history.Invoke, Process: p, F: history.Release, Key: "k", Lease: lease},
			{Time: inv + 1e6, Type: history.OK, Process: p, F: history.Release, Key: "k", Lease: lease},
		}
	}
	// w waits in line from 25ms; a releases at 100ms and b, sent at
	// 105ms, is granted before w.
	var ops []history.Op
	for _, o := range [][]history.Op{acq(1, "a", 0, 0, 10e6), rel(1, "a", 100e6), acq(3, "b", 105e6, 0, 120e6), rel(3, "b", 300e6)} {
		ops = append(ops, o...)
	}
	w := acq(2, "w", 20e6, 25e6, 400e6)
	ops = append([]history.Op{w[0]}, ops...)
	ops = append(ops, w[1])
	for i := range ops {
		ops[i].Index = i
	}
	rep := checker.Check(ops, checker.Options{Checkers: []string{"double-holds", "fairness"}})
	require.Equal(t, checker.Invalid, rep.Verdict, rep.Reason)
	r := &Results{Scenario: "s", Lock: "fair-barging", Workload: "mutex", Nemesis: "none", Expected: "unsafe", Dir: "d"}
	r.SetCheck(rep, true)
	require.Equal(t, "1 queue jump", Damage(r))
	require.Contains(t, Markdown(r), "- "+checker.KindQueueJump+" at t+0.120s: process 3's lease b")
}
