package cli

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// A suite run as two shards and merged gives the same index and the same
// JUnit cases as the suite run whole: fake runs, no container.
func TestTwoShardsMergedAreTheUnshardedRun(t *testing.T) {
	type fake struct {
		verdict, expected string
		noVerdict         bool
	}
	fakes := map[string]fake{
		"a-long": {"invalid", "unsafe", false}, "b-fails": {"valid", "unsafe", false}, "c-unjudged": {"invalid", "unknown", false},
		"d-short": {"valid", "safe", false}, "e-crashed": {noVerdict: true}, "f-mid": {"unknown", "safe", false},
	}
	var suite []scenarios.Scenario
	for i, name := range []string{"a-long", "b-fails", "c-unjudged", "d-short", "e-crashed", "f-mid"} {
		suite = append(suite, scenarios.Scenario{
			Shape: workloads.Shape{TTL: scenarios.Duration(time.Second)}, Name: name, Time: scenarios.Duration(time.Duration(60-9*i) * time.Second),
			Cluster: cluster.Spec{Topology: cluster.Independent},
		})
	}
	// runSuite writes what `deadbolt scenario --junit store/junit.xml`
	// leaves; each fake run has its own time, whichever store it is in.
	runSuite := func(store string, suite []scenarios.Scenario) {
		var runs []reports.SuiteRun
		for _, s := range suite {
			f := fakes[s.Name]
			if f.noVerdict {
				runs = append(runs, reports.SuiteRun{Name: s.Name, Err: errors.New("start cluster: no engine")})
				continue
			}
			dir := filepath.Join(store, s.Name, "20260101T000000.000Z")
			r := &reports.Results{Scenario: s.Name, Lock: "simple", Verdict: f.verdict, Expected: f.expected, Health: "ok",
				Matches: f.verdict == map[string]string{"unsafe": "invalid", "safe": "valid"}[f.expected], Dir: dir, Seed: 7}
			require.NoError(t, os.MkdirAll(dir, 0o755))
			b, err := json.Marshal(r)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, reports.ResultsFile), b, 0o644))
			runs = append(runs, reports.SuiteRun{Name: s.Name, Results: r})
		}
		f, err := os.Create(filepath.Join(store, reports.JUnitFile))
		require.NoError(t, err)
		require.NoError(t, reports.WriteJUnit(f, runs, time.Now(), time.Minute))
		require.NoError(t, f.Close())
		require.NoError(t, reports.WriteIndex(store))
	}
	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	require.NoError(t, os.Mkdir(whole, 0o755))
	runSuite(whole, suite)
	var shards []string
	for i := 1; i <= 2; i++ {
		store := filepath.Join(root, fmt.Sprintf("shard-%d", i))
		require.NoError(t, os.Mkdir(store, 0o755))
		part := scenarios.Shard(suite, i, 2)
		require.NotEmpty(t, part)
		runSuite(store, part)
		shards = append(shards, store)
	}
	merged := filepath.Join(root, "merged")
	code, out, stderr := deadbolt(t, append([]string{"report", "--merge", "--out", merged}, shards...)...)
	require.Equal(t, exitOK, code, "%s%s", out, stderr)
	require.Contains(t, out, "5 runs of 2 stores merged")

	wantIndex, err := os.ReadFile(filepath.Join(whole, reports.IndexFile))
	require.NoError(t, err)
	gotIndex, err := os.ReadFile(filepath.Join(merged, reports.IndexFile))
	require.NoError(t, err)
	require.Equal(t, string(wantIndex), string(gotIndex))
	require.Contains(t, string(gotIndex), "1 not judged")

	want, got := readCases(t, filepath.Join(whole, reports.JUnitFile)), readCases(t, filepath.Join(merged, reports.JUnitFile))
	require.Equal(t, want, got)

	// Merging again into the same store would copy runs it holds: refused.
	code, _, stderr = deadbolt(t, append([]string{"report", "--merge", "--out", merged}, shards...)...)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, stderr, "already holds the run")
	code, _, stderr = deadbolt(t, "report", "--merge", shards[0])
	require.Equal(t, exitBadInput, code)
	require.Contains(t, stderr, "needs --out")
}

type junitDoc struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Suites   []struct {
		Skipped int         `xml:"skipped,attr"`
		Cases   []junitCase `xml:"testcase"`
	} `xml:"testsuite"`
}

type junitCase struct {
	Name    string    `xml:"name,attr"`
	Failure *struct{} `xml:"failure"`
	Error   *struct{} `xml:"error"`
	Skipped *struct{} `xml:"skipped"`
}

func readCases(t *testing.T, path string) junitDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc junitDoc
	require.NoError(t, xml.Unmarshal(b, &doc))
	return doc
}
