package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

func deadbolt(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestBadInputExits254WithAMessage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{nil, "no command given"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"run"}, "exactly one scenario name"},
		{[]string{"run", "nope"}, `unknown scenario "nope"`},
		{[]string{"run", "failover-simple", "--seed", "x"}, "not a non-negative integer"},
		{[]string{"run", "failover-simple", "--time", "1s"}, "needs --time of at least"},
		{[]string{"run", "failover-simple", "--lock", "nope"}, `unknown lock "nope"`},
		{[]string{"run", "failover-simple", "--clients", "-2"}, "must not be negative"},
		{[]string{"run", "failover-simple", "--bogus"}, "flag provided but not defined"},
		{[]string{"scenario", "failover-simple", "nope"}, `unknown scenario "nope"`},
		{[]string{"check"}, "one run directory"},
		{[]string{"check", "/no/such/run"}, "no such file"},
		{[]string{"list", "extra"}, "no arguments"},
	} {
		code, _, stderr := deadbolt(t, tc.args...)
		require.Equal(t, exitBadInput, code, "%v", tc.args)
		require.Contains(t, stderr, tc.msg, "%v", tc.args)
	}
}

func TestListAndLocks(t *testing.T) {
	code, out, _ := deadbolt(t, "list")
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^failover-simple\s+unsafe`, out)
	require.Regexp(t, `(?m)^failover-redlock\s+safe`, out)
	code, out, _ = deadbolt(t, "locks")
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^simple\s`, out)
	require.Regexp(t, `(?m)^redlock\s`, out)
}

// writeHistory records n sequential acquire/release cycles on one key, and
// with overlap a second client's acquire inside the last one's hold.
func writeHistory(t *testing.T, n int, overlap bool) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "history.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	rec := history.NewRecorder(f)
	ttl := int64(10e9)
	for i := 0; i < n; i++ {
		owner := string(rune('a' + i))
		rec.Record(history.Op{Type: history.Invoke, Process: 0, F: history.Acquire, Key: "k", TTL: ttl})
		rec.Record(history.Op{Type: history.OK, Process: 0, F: history.Acquire, Key: "k", TTL: ttl, Owner: owner, Deadline: rec.Now() + ttl})
		if overlap && i == n-1 {
			rec.Record(history.Op{Type: history.Invoke, Process: 1, F: history.Acquire, Key: "k", TTL: ttl})
			rec.Record(history.Op{Type: history.OK, Process: 1, F: history.Acquire, Key: "k", TTL: ttl, Owner: "intruder", Deadline: rec.Now() + ttl})
		}
		rec.Record(history.Op{Type: history.Invoke, Process: 0, F: history.Release, Key: "k", Owner: owner})
		rec.Record(history.Op{Type: history.OK, Process: 0, F: history.Release, Key: "k", Owner: owner})
	}
	require.NoError(t, rec.Err())
	return dir
}

func TestCheckExitCodes(t *testing.T) {
	code, out, _ := deadbolt(t, "check", writeHistory(t, 12, false))
	require.Equal(t, exitOK, code, out)
	require.Contains(t, out, ": valid.")

	code, out, _ = deadbolt(t, "check", writeHistory(t, 12, true))
	require.Equal(t, exitContradicts, code, out)
	require.Contains(t, out, "double hold on key \"k\"")

	code, out, _ = deadbolt(t, "check", writeHistory(t, 2, false))
	require.Equal(t, exitUnknown, code, out)
	require.Contains(t, out, "idle run")

	corrupt := filepath.Join(t.TempDir(), "history.jsonl")
	require.NoError(t, os.WriteFile(corrupt, []byte("{\"index\":0,\"ti"), 0o644))
	code, _, stderr := deadbolt(t, "check", corrupt)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, stderr, "line 1: not a history operation")
}
