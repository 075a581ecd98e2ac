package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A bad scenario file exits 254 with the field's path, before any
// container starts.
func TestRunFileRefusesBadFieldsWithTheirPath(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	base := `"scenario": "x", "lock": "simple", "workload": "mutex", "nemesis": "plan", "cluster": {"Topology": "sentinel"},
	  "clients": 2, "keys": ["k0"], "ttl_ms": "1s"`
	for _, tc := range []struct{ body, msg string }{
		{`{` + base + `, "time_ms": "10s", "fault": {"steps": [{"fault": "kill"}, {"fault": "kill", "target": "rack:2"}]}}`, `fault.steps[1].target: bad target "rack:2"`},
		{`{` + base + `, "time_ms": "10s", "fault": {}, "colour": 1}`, `colour: unknown field`},
		{`{` + base + `, "time_ms": "10s", "fault": {}, "settle_ms": "a while"}`, `settle_ms: bad duration "a while"`},
		{`{` + base + `, "time_ms": "10s", "fault": {}, "target": {"Topology": "sentinel"}}`, `give --target FILE`},
		{`{` + base + `, "time_ms": "1s", "fault": {"steps": [{"fault": "kill"}]}}`, `needs --time of at least`}, // Prepare's, after the file's
	} {
		code, _, stderr := deadbolt(t, "run", "--file", write("s.json", tc.body), "--store", filepath.Join(dir, "store"))
		require.Equal(t, exitBadInput, code, stderr)
		require.Contains(t, stderr, tc.msg)
	}
	code, _, stderr := deadbolt(t, "run", "failover-simple", "--file", write("t.json", "{}"))
	require.Equal(t, exitBadInput, code)
	require.Contains(t, stderr, "not both")
	_, err := os.Stat(filepath.Join(dir, "store"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing is made for a refused file")
}
