package dbtest

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

func TestJudgeFailsAContradictionOrAnUnknownWithTheReport(t *testing.T) {
	r := &reports.Results{Scenario: "failover-simple", Lock: "mine", Seed: 3, Expected: "unsafe", Verdict: "valid",
		Reason: "no violation found", Dir: "/store/failover-simple/20260101t000000"}
	msg := judge(r)
	require.Contains(t, msg, "lock mine on failover-simple (seed 3): expected unsafe (a violation), the verdict is valid: no violation found")
	require.Contains(t, msg, "report: /store/failover-simple/20260101t000000/report.html")

	r.Expected, r.Verdict, r.Reason = "safe", "invalid", "2 double holds"
	r.Anomalies = []checker.Anomaly{{Kind: checker.KindDoubleHold, Text: "p1.1 and p2.1 on k0 during isolate-primary"}}
	msg = judge(r)
	require.Contains(t, msg, "expected safe (no violation), the verdict is invalid: 2 double holds")
	require.Contains(t, msg, "first double-hold: p1.1 and p2.1 on k0")

	r.Verdict, r.Reason = "unknown", "the nemesis never struck"
	require.Contains(t, judge(r), "the verdict is unknown, so the run proves nothing (expected safe, no violation): the nemesis never struck")

	r.Matches = true
	require.Empty(t, judge(r))
}

// Bad input is refused before any container starts, each with what to do.
func TestPrepareRefusesBadInputBeforeAnyContainer(t *testing.T) {
	cfg := config{seeds: []uint64{1}}
	for _, c := range []struct {
		lock   string
		expect Expect
		want   string
	}{
		{"no-such-lock", Expect{"crash-simple": Safe}, `unknown lock "no-such-lock"`},
		{"example-setnx", nil, "no scenario to run"},
		{"example-setnx", Expect{"nope": Safe}, `unknown scenario "nope"`},
		{"example-setnx", Expect{"failover-redlock": Safe}, "cannot run in scenario failover-redlock"},
		{"example-setnx", Expect{"crash-simple": "fine"}, `unknown expectation "fine"`},
	} {
		_, err := prepare(c.lock, c.expect, cfg)
		require.ErrorContains(t, err, c.want)
	}
	_, err := prepare("example-setnx", Expect{"crash-simple": Safe}, config{})
	require.ErrorContains(t, err, "at least one seed")

	// The test binary, run as a client process, offers the registered lock.
	p, err := prepare("example-setnx", Expect{"crash-simple": Safe}, cfg)
	require.NoError(t, err)
	require.NoError(t, p.locks.Lookup("example-setnx"))
	require.Contains(t, p.driver.Env, envDriver+"=1")

	mainRan = false
	defer func() { mainRan = true }()
	_, err = prepare("example-setnx", Expect{"crash-simple": Safe}, cfg)
	require.ErrorContains(t, err, "func TestMain(m *testing.M) { dbtest.Main(m) }")
}

// A real run whose verdict contradicts what the test said fails with the
// reason and the path of its report, which is there to read.
func TestAContradictedExpectationFailsWithTheReport(t *testing.T) {
	p, err := prepare("example-setnx", Expect{"crash-simple": Unsafe}, config{seeds: []uint64{1}})
	require.NoError(t, err)
	clustertest.RequireDocker(t)
	res, err := runOne(t, "crash-simple", scenarios.RunOptions{Seed: 1, Overrides: []scenarios.Override{scenarios.SetLock("example-setnx"), scenarios.SetExpect(Unsafe)},
		Store: t.TempDir(), Driver: p.driver, Locks: p.locks, Log: t.Logf})
	require.NoError(t, err)
	require.Equal(t, "valid", res.Verdict, res.Reason)
	msg := judge(res)
	require.Contains(t, msg, "expected unsafe (a violation), the verdict is valid")
	require.Contains(t, msg, "report: "+reportPath(res))
	_, err = os.Stat(reportPath(res))
	require.NoError(t, err, "the report named is written")
}
