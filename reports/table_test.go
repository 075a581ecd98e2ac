package reports

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
)

func TestTableAndEvidence(t *testing.T) {
	hold := func(p int, at int64) checker.Hold { return checker.Hold{Process: p, AcquiredAt: at, Until: at + 5e8} }
	unsafe := &Results{Scenario: "failover-simple", Lock: "simple", Expected: "unsafe", Verdict: "invalid", Matches: true,
		DoubleHolds: []checker.DoubleHold{{Key: "k0", First: hold(3, 5e9), Second: hold(4, 5.2e9),
			OverlapStart: 5.2e9, OverlapEnd: 5.5e9, Faults: []string{"isolate-primary(redis-1)"}}}}
	noFault := &Results{Scenario: "expiry-del-no-owner", Expected: "unsafe", Verdict: "invalid", Matches: true,
		DoubleHolds: []checker.DoubleHold{{Key: "k1", First: hold(5, 3e8), Second: hold(4, 4e8), OverlapStart: 4e8, OverlapEnd: 6e8}}}
	safe := &Results{Scenario: "failover-redlock", Expected: "safe", Verdict: "invalid", Matches: false}

	var b bytes.Buffer
	require.NoError(t, Table(&b, []*Results{unsafe, safe}))
	require.Regexp(t, `failover-simple\s+simple .* 1\s+ .*unsafe\s+invalid\s+PASS`, b.String())
	require.Regexp(t, `failover-redlock .*safe\s+invalid\s+FAIL`, b.String())

	require.Equal(t, "key k0: process 3 (acquired t+5.000s) and process 4 (acquired t+5.200s) overlap t+5.200s..t+5.500s during isolate-primary(redis-1)",
		FirstDoubleHold(unsafe))
	require.Contains(t, FirstDoubleHold(noFault), "with no fault active")
	require.Empty(t, FirstDoubleHold(safe))
}

func TestMarkdownNamesTheEvidence(t *testing.T) {
	r := &Results{Scenario: "failover-simple", Seed: 7, Expected: "unsafe", Verdict: "invalid", Matches: true, Dir: "store/x",
		FaultWindows: []checker.FaultWindow{{Fault: "isolate-primary", Node: "redis-1", Start: 3e9, End: 11e9, Healed: true}},
		DoubleHolds: []checker.DoubleHold{{Key: "k0", First: checker.Hold{Process: 3, AcquiredAt: 5e9, Until: 5.5e9},
			Second: checker.Hold{Process: 4, AcquiredAt: 5.2e9, Until: 6e9}, OverlapStart: 5.2e9, OverlapEnd: 5.5e9,
			Faults: []string{"isolate-primary(redis-1)"}}}}
	md := Markdown(r)
	require.Contains(t, md, "**Verdict: invalid**, expected unsafe: the result matches")
	require.Contains(t, md, "- isolate-primary(redis-1) from t+3.000s to t+11.000s")
	require.Contains(t, md, "| k0 | process 3, t+5.000s to t+5.500s | process 4, t+5.200s to t+6.000s | t+5.200s to t+5.500s (300ms) | isolate-primary(redis-1) |")
	require.Contains(t, md, "deadbolt run failover-simple --seed 7")
	r.Matches = false
	require.Contains(t, Markdown(r), "does NOT match")
}
