package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
)

func TestJUnitHasOneCasePerScenarioWithTheReason(t *testing.T) {
	result := func(name, verdict, expected string, matches bool, health string) *Results {
		return &Results{Scenario: name, Verdict: verdict, Expected: expected, Matches: matches, Health: health,
			Reason: "reason of " + name, DurationS: 12.5, Dir: "store/" + name + "/t",
			Anomalies: []checker.Anomaly{{Kind: checker.KindDoubleHold, Text: "evidence of " + name}}}
	}
	runs := []SuiteRun{
		{Name: "passes", Results: result("passes", "invalid", "unsafe", true, "ok")},
		{Name: "contradicts", Results: result("contradicts", "invalid", "safe", false, "ok")},
		{Name: "undecided", Results: result("undecided", "unknown", "safe", false, "ok")},
		{Name: "unhealthy", Results: result("unhealthy", "valid", "safe", true, "not healthy after 1m0s")},
		{Name: "crashed", Err: errors.New("start cluster: no engine")},
	}
	var b bytes.Buffer
	require.NoError(t, WriteJUnit(&b, runs, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), 90*time.Second))

	var doc junitSuites
	require.NoError(t, xml.Unmarshal(b.Bytes(), &doc))
	require.Equal(t, 5, doc.Tests)
	require.Equal(t, 1, doc.Failures)
	require.Equal(t, 3, doc.Errors)
	require.Len(t, doc.Suites, 1)
	s := doc.Suites[0]
	require.Equal(t, "2026-01-02T03:04:05", s.Timestamp)
	require.Equal(t, "90.000", s.Time)
	byName := map[string]junitCase{}
	for _, c := range s.Cases {
		byName[c.Name] = c
	}
	require.Len(t, byName, 5)
	require.Nil(t, byName["passes"].Failure)
	require.Nil(t, byName["passes"].Error)
	require.Equal(t, "12.500", byName["passes"].Time)
	f := byName["contradicts"].Failure
	require.NotNil(t, f)
	require.Equal(t, "verdict invalid, expected safe: reason of contradicts", f.Message)
	require.Contains(t, f.Text, "first double-hold: evidence of contradicts")
	require.Equal(t, "unknown", byName["undecided"].Error.Type)
	require.Contains(t, byName["unhealthy"].Error.Message, "not healthy after 1m0s")
	require.Contains(t, byName["crashed"].Error.Message, "no verdict: start cluster: no engine")
	require.Contains(t, byName["passes"].SystemOut, "store/passes/t/report.html")
}

// A lock nobody has judged under a failure is neither a pass nor a
// failure: skipped, its verdict in the message.
func TestJUnitSkipsAnUnjudgedRun(t *testing.T) {
	r := &Results{Scenario: "failover-simple@fenced", Lock: "fenced", Verdict: "invalid", Expected: "unknown", Health: "ok", Reason: "two holders"}
	var b bytes.Buffer
	require.NoError(t, WriteJUnit(&b, []SuiteRun{{Name: r.Scenario, Results: r}}, time.Now(), time.Second))
	var doc junitSuites
	require.NoError(t, xml.Unmarshal(b.Bytes(), &doc))
	c := doc.Suites[0].Cases[0]
	require.Nil(t, c.Failure)
	require.Nil(t, c.Error)
	require.NotNil(t, c.Skipped)
	require.Contains(t, c.Skipped.Message, "verdict invalid: two holders")
	require.Equal(t, 1, doc.Suites[0].Skipped)
	require.Equal(t, 0, doc.Failures)
	require.Equal(t, "UNJUDGED", r.Outcome())
}
