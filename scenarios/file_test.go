package scenarios_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/scenarios"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// handWritten is a scenario a user adds without compiling.
const handWritten = `{
  "scenario": "my-pause",
  "lock": "simple",
  "workload": "counter",
  "nemesis": "plan",
  "cluster": {"topology": "independent", "masters": 1},
  "fault": {"steps": [{"fault": "pause-client", "target": "holder", "key": "k0", "on": "read", "ttls": 2}]},
  "clients": 3, "keys": ["k0"],
  "ttl": "1s", "hold_min": "50ms", "hold_max": "200ms", "pause": "20ms", "time": "8s"
}`

// handWrittenBefore is handWritten as files said it before durations were
// one type: *_ms fields, whole milliseconds or duration strings.
var handWrittenBefore = strings.Replace(handWritten,
	`"ttl": "1s", "hold_min": "50ms", "hold_max": "200ms", "pause": "20ms", "time": "8s"`,
	`"ttl_ms": "1s", "hold_min_ms": 50, "hold_max_ms": "200ms", "pause_ms": 20, "time_ms": "8s"`, 1)

func TestAFileOfTheOldMillisecondFieldsReadsAsBefore(t *testing.T) {
	now, err := scenarios.ParseFile([]byte(handWritten))
	require.NoError(t, err)
	before, err := scenarios.ParseFile([]byte(handWrittenBefore))
	require.NoError(t, err)
	require.Equal(t, now, before)
	for _, tc := range []struct{ from, to, msg string }{
		{`"ttl_ms": "1s"`, `"ttl_ms": "1s", "ttl": "2s"`, `ttl_ms: the old name of ttl, which is given too`},
		{`"ttl_ms": "1s"`, `"ttl_ms": "soon"`, `ttl_ms: bad duration "soon"`},
		{`"pause_ms": 20`, `"pause_ms": 2.5`, `pause_ms: want whole milliseconds`},
	} {
		_, err := scenarios.ParseFile([]byte(strings.Replace(handWrittenBefore, tc.from, tc.to, 1)))
		require.ErrorContains(t, err, tc.msg, tc.to)
	}
}

// A file of the cluster's old field names (its Go names, as encoding/json
// matched them in any case, DownAfter a duration string) reads as today's,
// and one that names a field both ways is refused.
func TestAFileOfTheClustersOldFieldNamesReadsAsBefore(t *testing.T) {
	clusterNow := `"cluster": {"topology": "independent", "masters": 1},`
	require.Contains(t, handWritten, clusterNow)
	now, err := scenarios.ParseFile([]byte(strings.Replace(handWritten, clusterNow,
		`"cluster": {"topology": "sentinel", "down_after": "3s", "tls": true, "link_faults": true},`, 1)))
	require.NoError(t, err)
	for _, old := range []string{
		`"cluster": {"Topology": "sentinel", "DownAfter": "3s", "TLS": true, "LinkFaults": true},`,
		`"cluster": {"topology": "sentinel", "downafter": "3s", "Tls": true, "linkFaults": true},`,
		`"cluster": {"topology": "sentinel", "DownAfter": 3000000000, "TLS": true, "LinkFaults": true},`,
	} {
		before, err := scenarios.ParseFile([]byte(strings.Replace(handWritten, clusterNow, old, 1)))
		require.NoError(t, err, old)
		require.Equal(t, now, before, old)
	}
	for _, tc := range []struct{ cluster, msg string }{
		{`"cluster": {"Topology": "sentinel", "topology": "sentinel"},`, `cluster.Topology: the old name of topology, which is given too`},
		{`"cluster": {"topology": "sentinel", "DownAfter": "3s", "down_after": "3s"},`, `cluster.DownAfter: the old name of down_after, which is given too`},
		{`"cluster": {"topology": "sentinel", "DownAfter": "soon"},`, `cluster.DownAfter: bad duration "soon" (whole nanoseconds`},
		{`"cluster": {"topology": "sentinel", "DownAfter": 1.5},`, `cluster.DownAfter: want whole nanoseconds, got 1.5`},
	} {
		_, err := scenarios.ParseFile([]byte(strings.Replace(handWritten, clusterNow, tc.cluster, 1)))
		require.ErrorContains(t, err, tc.msg, tc.cluster)
	}
}

func TestAHandWrittenFileRunsWithoutCompiling(t *testing.T) {
	f, err := scenarios.ParseFile([]byte(handWritten))
	require.NoError(t, err)
	s := f.Scenario
	require.Nil(t, f.Seed)
	require.Equal(t, "my-pause", s.Name)
	require.Equal(t, scenarios.Unknown, s.Expect, "no expect and no entry in the table: nobody judged it")
	require.Equal(t, int64(1000), s.TTL.D().Milliseconds())
	require.Equal(t, int64(50), s.HoldMin.D().Milliseconds())
	_, err = s.Prepare(scenarios.RunOptions{})
	require.NoError(t, err)
}

func TestAStoredRunsFileKeepsItsSeedAndExpectation(t *testing.T) {
	s, err := scenarios.Get("pause-simple")
	require.NoError(t, err)
	kind, err := workloads.Get(s.WorkloadName())
	require.NoError(t, err)
	// Runs stored before the lean client name `deadbolt client`.
	for _, own := range [][]string{{"/somewhere/bin/deadbolt-client"}, {"/somewhere/bin/deadbolt", "client"}} {
		r := s.Spec()
		r.Seed, r.Checkers, r.Driver = 42, kind.Judges(), own
		f, err := scenarios.ParseFile(mustFile(t, r))
		require.NoError(t, err)
		require.NotNil(t, f.Seed)
		require.Equal(t, uint64(42), *f.Seed)
		require.Nil(t, f.Driver, "%v of any path is deadbolt's own client", own)
		require.Equal(t, s.Expect, f.Scenario.Expect)
		require.Equal(t, s.Spec(), f.Scenario.Spec())
	}
}

func TestBadFilesAreRefusedWithTheFieldsPath(t *testing.T) {
	for _, tc := range []struct{ from, to, msg string }{
		{`"clients": 3`, `"clients": 3, "colour": "red"`, `colour: unknown field`},
		{`"masters": 1`, `"masters": 1, "racks": 2`, `cluster.racks: unknown field`},
		{`"ttls": 2`, `"ttls": 2, "rack": 1`, `fault.steps[0].rack: unknown field`},
		{`"clients": 3`, `"clients": "3"`, `clients: want an integer, got the string "3"`},
		{`"ttl": "1s"`, `"ttl": "soon"`, `ttl: bad duration "soon"`},
		{`"ttl": "1s"`, `"ttl": 1000`, `ttl: want a Go duration such as "1.5s", got the number 1000`},
		{`"ttl": "1s"`, `"ttl": "0s"`, `ttl: want at least 1ms`},
		{`"hold_max": "200ms"`, `"hold_max": "10ms"`, `hold_max: want at least 50ms`},
		{`"lock": "simple"`, `"lock": "simpel"`, `lock: unknown lock "simpel"`},
		{`"workload": "counter"`, `"workload": "ledger"`, `workload: unknown workload "ledger"`},
		{`"nemesis": "plan"`, `"nemesis": "meteor"`, `nemesis: unknown nemesis "meteor"`},
		{`"fault": "pause-client"`, `"fault": "flood"`, `fault.steps[0].fault: unknown fault "flood"`},
		{`"target": "holder"`, `"target": "rack:2"`, `fault.steps[0].target: bad target "rack:2"`},
		{`"ttls": 2`, `"ttls": 2, "after": "-1s"`, `fault.steps[0]: fault pause-client: negative`},
		{`"topology": "independent"`, `"topology": "ring"`, `cluster: unknown topology "ring"`},
		{`"masters": 1`, `"masters": 1, "down_after": 2000000000`, `cluster.down_after: want a Go duration such as "1.5s", got the number 2000000000`},
		{`"scenario": "my-pause"`, `"scenario": "../escape"`, `scenario: want a name`},
		{`"lock": "simple"`, `"lock": "simple", "expect": "maybe"`, `expect: unknown expectation "maybe"`},
		{`"lock": "simple"`, `"lock": "simple", "driver_name": "perl"`, `driver_name: unknown driver "perl"`},
		{`"lock": "simple"`, `"lock": "simple", "checkers": ["vibes"]`, `checkers: workload counter is judged by`},
		{`"clients": 3`, `"clients": 0`, `clients: want 1 to 256`},
		{`"keys": ["k0"]`, `"keys": ["k0", ""]`, `keys[1]: empty key`},
		{`"lock": "simple"`, `"lock": "simple", "mix": [{"lock": "simple-wait", "clients": 0}]`, `mix[0].clients: a lock mixed in needs at least one client`},
		{`"lock": "simple"`, `"lock": "simple", "mix": [{"lock": "nolib@v1.0.0", "clients": 1}]`, `mix[0].lock: lock "nolib@v1.0.0": unknown library "nolib"`},
		{`"lock": "simple"`, `"lock": "simple", "mix": [{"clients": 1}]`, `mix[0].lock: missing`},
	} {
		src := strings.Replace(handWritten, tc.from, tc.to, 1)
		require.NotEqual(t, handWritten, src, tc.from)
		_, err := scenarios.ParseFile([]byte(src))
		require.ErrorContains(t, err, tc.msg, tc.to)
	}
}

func TestReadFileNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"scenario": 3}`), 0o644))
	_, err := scenarios.ReadFile(path)
	require.ErrorContains(t, err, path+": scenario: want a string")
}

// The matrix's cells: a template's failure with another lock, expecting
// what the known-results table says, unknown where nobody judged it.
func TestACellExpectsWhatTheTableKnows(t *testing.T) {
	tpl, err := scenarios.Get("failover-simple")
	require.NoError(t, err)
	require.Equal(t, tpl, scenarios.Cell(tpl, "simple"))
	require.Equal(t, scenarios.Unsafe, scenarios.Expected("failover-simple", "simple"))
	c := scenarios.Cell(tpl, "fenced")
	require.Equal(t, "failover-simple@fenced", c.Name)
	require.Equal(t, "fenced", c.Lock)
	require.Equal(t, scenarios.Unknown, c.Expect)
	require.False(t, c.CI)
	_, err = c.Prepare(scenarios.RunOptions{})
	require.NoError(t, err)
	f, err := scenarios.ParseFile(mustFile(t, c.Spec()))
	require.NoError(t, err)
	require.Equal(t, c.Spec(), f.Scenario.Spec(), "a cell's file reads back as the cell")
}

func mustFile(t *testing.T, r scenarios.RunSpec) []byte {
	b, err := scenarios.MarshalFile(r)
	require.NoError(t, err)
	return b
}
