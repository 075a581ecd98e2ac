package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
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
		{[]string{"run", "failover-simple", "--clients", "-2"}, "must be from 1 to 256"},
		{[]string{"run", "failover-simple", "--clients", "0"}, "must be from 1 to 256"},
		{[]string{"run", "failover-simple", "--clients", "100000"}, "must be from 1 to 256"},
		{[]string{"run", "failover-simple", "--time", "0s"}, "must be more than 0"},
		{[]string{"run", "failover-simple", "--time", "100h"}, "at most 1h0m0s"},
		{[]string{"run", "failover-simple", "--seed", "3abc"}, "not a non-negative integer"},
		{[]string{"run", "failover-simple", "--seed", "0x10"}, "not a non-negative integer"},
		{[]string{"run", "failover-simple", "--store", "/proc/no-store-here"}, "--store /proc/no-store-here"},
		{[]string{"scenario", "--store", "/proc/no-store-here"}, "--store /proc/no-store-here"},
		{[]string{"run", "failover-simple", "--bogus"}, "flag provided but not defined"},
		{[]string{"scenario", "failover-simple", "nope"}, `unknown scenario "nope"`},
		{[]string{"check"}, "one run directory"},
		{[]string{"check", "/no/such/run"}, "no such file"},
		{[]string{"check", "--model-steps", "x", "/tmp"}, `want a whole number of steps, 1 or more, got "x"`},
		{[]string{"check", "--model-steps", "-5", "/tmp"}, `want a whole number of steps, 1 or more, got "-5"`},
		{[]string{"check", "--model-steps", "0", "/tmp"}, `want a whole number of steps, 1 or more, got "0"`},
		{[]string{"check", "--model-steps", "1e6", "/tmp"}, `got "1e6"`},
		{[]string{"list", "extra"}, "no arguments"},
		{[]string{"workloads", "extra"}, "no arguments"},
		{[]string{"faults", "extra"}, "no arguments"},
		{[]string{"run", "pause-simple", "--workload", "nope"}, `unknown workload "nope"`},
		{[]string{"run", "pause-simple", "--lock", "get-then-del", "--workload", "mutex"}, "waits for a resource read"},
		{[]string{"run", "pause-get-then-del", "--lock", "simple"}, `lock simple has no point "after-get"`},
		{[]string{"run", "pause-get-then-del", "--lock", "get-then-del-no-points"}, `lock get-then-del-no-points has no point "after-get"`},
		{[]string{"run", "pause-in-release-get-then-del", "--time", "5s"}, "needs --time of at least"},
		{[]string{"client", "extra"}, "takes no arguments"},
		{[]string{"run", "failover-redlock", "--nemesis", "meteor"}, `unknown nemesis "meteor"`},
		{[]string{"run", "failover-redlock", "--nemesis", "random"}, "at least one fault"},
		{[]string{"run", "failover-redlock", "--nemesis", "random", "--faults", "kill,meteor"}, `unknown fault "meteor"`},
		{[]string{"run", "failover-redlock", "--nemesis", "random", "--faults", "kill,,"}, "empty fault name"},
		{[]string{"run", "failover-redlock", "--faults", "kill"}, "give --nemesis random too"},
		{[]string{"run", "pause-simple", "--nemesis", "pause-client", "--faults", "kill"}, "fault.faults: nemesis pause-client does not take it"},
		{[]string{"explore"}, "explore needs --lock"},
		{[]string{"explore", "--lock", "nope"}, `unknown lock "nope"`},
		{[]string{"explore", "--lock", "simple", "--runs", "0"}, "must be from 1 to 1000"},
		{[]string{"explore", "--lock", "simple", "--parallel", "9"}, "must be from 1 to 8"},
		{[]string{"explore", "--lock", "simple", "--against", "simple"}, "is the lock explored"},
		{[]string{"explore", "--lock", "simple", "--against", "nope"}, `unknown lock "nope"`},
		{[]string{"explore", "--lock", "simple", "pause-simple"}, "explore takes no scenario names"},
		{[]string{"explore", "--lock", "simple", "--store", "/proc/no-store-here"}, "--store /proc/no-store-here"},
		{[]string{"bisect"}, "bisect takes one scenario file"},
		{[]string{"bisect", "f.json"}, "bisect needs --lock"},
		{[]string{"bisect", "f.json", "--lock", "redsync@v4.0.3"}, "name the library alone"},
		{[]string{"bisect", "f.json", "--lock", "redsync"}, "bisect needs --versions"},
		{[]string{"bisect", "f.json", "--lock", "nope", "--versions", "v1.0.0"}, `unknown library "nope"`},
		{[]string{"bisect", "f.json", "--lock", "redsync", "--versions", "v4.4.1..v4.0.0"}, "the older first"},
		{[]string{"bisect", "/no/such/file.json", "--lock", "redsync", "--versions", "v4.0.3,v4.0.4"}, "no such file"},
		{[]string{"audit", "--go-mod", "/no/such/go.mod"}, "no such file"},
		{[]string{"audit", "--go-mod", "go.mod", "--libraries", "redsync@v4.0.3"}, "give one"},
		{[]string{"matrix", "--faults", "pause"}, "give them with --failures"},
		{[]string{"audit", "--faults", "pause"}, "give them with --failures"},
		{[]string{"matrix", "failover-simple"}, "matrix takes no scenario names"},
		{[]string{"matrix", "--locks", "simple,,redlock"}, "empty lock name"},
		{[]string{"matrix", "--failures", "meteor"}, `unknown failure "meteor"`},
		{[]string{"matrix", "--seeds", "0"}, "must be from 1 to 20"},
		{[]string{"matrix", "--shard", "0/2"}, "want i/n with 1 <= i <= n"},
		{[]string{"matrix", "--shard", "3/2"}, "want i/n with 1 <= i <= n"},
		{[]string{"matrix", "--shard", "2"}, "want i/n with 1 <= i <= n"},
		{[]string{"matrix", "--shard=1/0"}, "want i/n with 1 <= i <= n"},
		{[]string{"scenario", "--shard", "2/1"}, "want i/n with 1 <= i <= n"},
		{[]string{"sweep", "pause-simple", "--knob", "colour", "--values", "1"}, `unknown knob "colour"`},
		{[]string{"sweep", "pause-simple", "--knob", "down-after-ttl", "--values", "1"}, "independent topology"},
		{[]string{"sweep", "pause-simple", "--knob", "pause-ttl", "--values", "1,-2"}, "want numbers above 0"},
		{[]string{"shrink"}, "one run directory"},
		{[]string{"shrink", "/no/such/run"}, "no such file"},
		{[]string{"run", "failover-redlock", "--nemesis", "random", "--faults", "isolate-primary"}, "needs the sentinel or cluster topology"},
		{[]string{"run", "failover-redlock", "--nemesis", "plan"}, "at least one step"},
		{[]string{"run", "failover-simple", "--min-replicas-to-write", "-1"}, "min-replicas-to-write must be 0 (off) or more, got -1"},
		{[]string{"run", "failover-simple", "--min-replicas-to-write", "one"}, `not an integer: "one"`},
		{[]string{"run", "failover-simple", "--min-replicas-max-lag", "1"}, "min-replicas-max-lag 1 without min-replicas-to-write"},
		{[]string{"run", "failover-simple", "--min-replicas-to-write", "3"}, "each master has 2 replica(s): every write would be refused"},
		{[]string{"run", "failover-redlock", "--min-replicas-to-write", "1"}, "each master has 0 replica(s)"},
		{[]string{"run", "failover-simple", "--tls=maybe"}, "invalid boolean value"},
		{[]string{"run", "failover-simple", "--tls", "--lock", "nope"}, `unknown lock "nope"`},
		{[]string{"run", "failover-simple", "--server", "redis-6.2"}, `unknown server "redis-6.2" (known: redis-7.0, redis-8.0, valkey-8.1)`},
		{[]string{"scenario", "--server", "keydb"}, `unknown server "keydb"`},
		{[]string{"matrix", "--server", "valkey"}, `unknown server "valkey"`},
		{[]string{"matrix", "--servers", "redis-7.0,valkey"}, `--servers: unknown server "valkey"`},
		{[]string{"matrix", "--servers", "redis-7.0,,valkey-8.1"}, "empty server name"},
		{[]string{"matrix", "--server", "redis-8.0", "--servers", "valkey-8.1"}, "--server and --servers both pick the servers"},
		{[]string{"sweep", "pause-simple", "--knob", "pause-ttl", "--values", "1", "--server", "x"}, `unknown server "x"`},
		{[]string{"run", "failover-simple", "--server", "redis-8.0", "--target", "t.json"}, "--target runs against a deployment"},
		// help COMMAND names a command; version takes nothing.
		{[]string{"help", "frobnicate"}, `help: unknown command "frobnicate" (deadbolt help lists the commands)`},
		{[]string{"help", "run", "scenario"}, "help takes one command name"},
		{[]string{"version", "extra"}, "version takes no arguments"},
		{[]string{"--version", "--bogus"}, "flag provided but not defined"},
		{[]string{"client", "--bogus"}, "flag provided but not defined"},
		// A misspelt name: the message, then the closest known name.
		{[]string{"rnu"}, `unknown command "rnu"; did you mean "run"?`},
		{[]string{"senario"}, `unknown command "senario"; did you mean "scenario"?`},
		{[]string{"help", "matirx"}, `help: unknown command "matirx" (deadbolt help lists the commands); did you mean "matrix"?`},
		{[]string{"run", "failover-simpel"}, `unknown scenario "failover-simpel" (known: `},
		{[]string{"run", "failover-simpel"}, `); did you mean "failover-simple"?`},
		{[]string{"run", "failover-simpel@redlock"}, `); did you mean "failover-simple@redlock"?`},
		{[]string{"scenario", "failover-simple", "pause-simpel"}, `unknown scenario "pause-simpel" (known: `},
		{[]string{"scenario", "failover-simple", "pause-simpel"}, `); did you mean "pause-simple"?`},
		{[]string{"run", "failover-simple", "--lock", "simpel"}, `unknown lock "simpel" (known: `},
		{[]string{"run", "failover-simple", "--lock", "simpel"}, `); did you mean "simple"?`},
		{[]string{"run", "failover-simple", "--lock", "redlok"}, `did you mean "redlock"?`},
		{[]string{"run", "pause-simple", "--workload", "mutx"}, `unknown workload "mutx" (known: counter, `},
		{[]string{"run", "pause-simple", "--workload", "mutx"}, `); did you mean "mutex"?`},
		{[]string{"run", "failover-redlock", "--nemesis", "randon"}, `unknown nemesis "randon" (known: `},
		{[]string{"run", "failover-redlock", "--nemesis", "randon"}, `); did you mean "random"?`},
		{[]string{"run", "failover-redlock", "--nemesis", "random", "--faults", "kill,restrat"}, `unknown fault "restrat" (known: `},
		{[]string{"run", "failover-redlock", "--nemesis", "random", "--faults", "kill,restrat"}, `); did you mean "restart"?`},
		{[]string{"matrix", "--failures", "pausee"}, `unknown failure "pausee" (known: failover, `},
		{[]string{"matrix", "--failures", "pausee"}, `); did you mean "pause"?`},
		{[]string{"run", "failover-simple", "--server", "valkey-81"}, `unknown server "valkey-81" (known: redis-7.0, redis-8.0, valkey-8.1); did you mean "valkey-8.1"?`},
		{[]string{"matrix", "--servers", "redis-7.0,valky-8.1"}, `--servers: unknown server "valky-8.1" (known: redis-7.0, redis-8.0, valkey-8.1); did you mean "valkey-8.1"?`},
		{[]string{"sweep", "pause-simple", "--knob", "pause-tll", "--values", "1"}, `unknown knob "pause-tll" (known: pause-ttl, down-after-ttl); did you mean "pause-ttl"?`},
	} {
		code, _, stderr := deadbolt(t, tc.args...)
		require.Equal(t, exitBadInput, code, "%v", tc.args)
		require.Contains(t, stderr, tc.msg, "%v", tc.args)
	}
}

// A name nothing known is close to gets no suggestion, only the list.
func TestNoSuggestionForANameFarFromAnyKnown(t *testing.T) {
	for _, args := range [][]string{
		{"frobnicate"},
		{"help", "frobnicate"},
		{"run", "nope"},
		{"run", "failover-simple", "--lock", "zzzzzz"},
		{"run", "pause-simple", "--workload", "zzzzzz"},
		{"run", "failover-redlock", "--nemesis", "meteor"},
		{"run", "failover-redlock", "--nemesis", "random", "--faults", "kill,meteor"},
		{"matrix", "--failures", "meteor"},
		{"scenario", "--server", "keydb"},
	} {
		code, _, stderr := deadbolt(t, args...)
		require.Equal(t, exitBadInput, code, "%v", args)
		require.Contains(t, stderr, "unknown ", "%v", args)
		require.NotContains(t, stderr, "did you mean", "%v", args)
	}
}

// --help prints the command's flags on stdout and exits 0, before any
// container; a bad flag names the --help that lists them.
func TestHelpListsACommandsFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"run", "--help"}, "-seed"},
		{[]string{"run", "failover-simple", "-h"}, "-nemesis"},
		{[]string{"scenario", "--help"}, "-parallel"},
		{[]string{"check", "--help"}, "usage of deadbolt check"},
		// help COMMAND is COMMAND --help.
		{[]string{"help", "run"}, "-seed"},
		{[]string{"help", "run"}, "usage of deadbolt run:\n  deadbolt run NAME [flags]"},
		{[]string{"help", "scenario"}, "-parallel"},
		{[]string{"help", "check"}, "-model-steps N"},
		{[]string{"--help", "matrix"}, "-locks"},
		{[]string{"-h", "report"}, "-merge"},
		{[]string{"help", "list"}, "usage of deadbolt list:\n  deadbolt list "},
		{[]string{"help", "client"}, "usage of deadbolt client:\n  deadbolt client "},
		{[]string{"client", "--help"}, "usage of deadbolt client"},
		{[]string{"help", "version"}, "usage of deadbolt version"},
		{[]string{"help", "help"}, "deadbolt help [COMMAND]"},
		{[]string{"help"}, "deadbolt help [COMMAND]"},
	} {
		code, stdout, stderr := deadbolt(t, tc.args...)
		require.Equal(t, exitOK, code, "%v: %s", tc.args, stderr)
		require.Contains(t, stdout, tc.flag, "%v", tc.args)
	}
	code, _, stderr := deadbolt(t, "run", "failover-simple", "--bogus")
	require.Equal(t, exitBadInput, code)
	require.Contains(t, stderr, "deadbolt run --help lists its flags")
}

// Every command has help of its own: help COMMAND and COMMAND --help print
// the same, which is not the general usage.
func TestHelpOfEveryCommand(t *testing.T) {
	_, general, _ := deadbolt(t, "help")
	for _, name := range commandNames() {
		if name == "help" {
			continue
		}
		code, stdout, stderr := deadbolt(t, "help", name)
		require.Equal(t, exitOK, code, "help %s: %s", name, stderr)
		require.True(t, strings.HasPrefix(stdout, "usage of deadbolt "+name+":\n  deadbolt "+name), "help %s:\n%s", name, stdout)
		require.NotEqual(t, general, stdout, "help %s", name)
		code, own, _ := deadbolt(t, name, "--help")
		require.Equal(t, exitOK, code, "%s --help", name)
		require.Equal(t, stdout, own, "help %s and %s --help", name, name)
	}
}

// A flag's value name is what the flag package takes from the first
// backquoted word of its usage: a word, never a phrase.
func TestFlagValueNamesAreOneWord(t *testing.T) {
	flagLine := regexp.MustCompile(`^  -(\S+)(?: (.*))?$`)
	for _, name := range commandNames() {
		_, stdout, _ := deadbolt(t, name, "--help")
		require.NotContains(t, stdout, "`", "%s --help", name)
		for _, line := range strings.Split(stdout, "\n") {
			m := flagLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			require.NotContains(t, m[2], " ", "%s --help: -%s's value name %q", name, m[1], m[2])
		}
	}
	_, stdout, _ := deadbolt(t, "scenario", "--help")
	require.Contains(t, stdout, "  -shard i/n\n")
	_, stdout, _ = deadbolt(t, "audit", "--help")
	require.Contains(t, stdout, "  -libraries NAME@VERSION,...\n")
}

// version and --version print deadbolt's version and the Go that built
// it, exit 0.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		code, stdout, stderr := deadbolt(t, args...)
		require.Equal(t, exitOK, code, "%v: %s", args, stderr)
		require.Empty(t, stderr, "%v", args)
		require.Regexp(t, `^deadbolt \S+( vcs\.\S+)* go\S+\n$`, stdout, "%v", args)
		require.Contains(t, stdout, runtime.Version(), "%v", args)
	}
}

func TestVersionLine(t *testing.T) {
	require.Equal(t, "deadbolt (devel) "+runtime.Version(), versionLine(nil, false), "no build information")
	bi := &debug.BuildInfo{
		GoVersion: "go1.99.1",
		Main:      debug.Module{Path: "github.com/deadbolt-lab/deadbolt", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "-buildmode", Value: "exe"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "4bc9dba0c0ffee"},
			{Key: "vcs.time", Value: "2025-01-01T00:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	require.Equal(t, "deadbolt (devel) vcs.revision=4bc9dba0c0ffee vcs.modified=true go1.99.1", versionLine(bi, true))
	bi.Main.Version, bi.Settings = "v1.2.3", nil
	require.Equal(t, "deadbolt v1.2.3 go1.99.1", versionLine(bi, true), "go install ...@v1.2.3: no VCS settings")
	bi.Main.Version = ""
	require.Equal(t, "deadbolt (devel) go1.99.1", versionLine(bi, true), "a test binary's main module has no version")
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
	code, out, _ = deadbolt(t, "workloads")
	require.Equal(t, 0, code)
	for _, w := range []string{"mutex", "counter", "fenced", "orders"} {
		require.Regexp(t, `(?m)^`+w+`\s+\S`, out)
	}
	code, out, _ = deadbolt(t, "faults")
	require.Equal(t, 0, code)
	for _, f := range []string{"kill", "restart", "pause-node", "isolate-primary", "isolate-replica", "sentinel-failover",
		"link-delay", "link-cut", "clock-jump", "pause-client", "crash-client",
		"pause-in-acquire", "pause-in-release", "crash-in-acquire", "crash-in-release"} {
		require.Regexp(t, `(?m)^`+f+`\s+\S+\s+\S`, out)
	}
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
		lease := "p0." + owner
		rec.Record(history.Op{Type: history.Invoke, Process: 0, F: history.Acquire, Key: "k", Lease: lease, TTL: ttl})
		rec.Record(history.Op{Type: history.OK, Process: 0, F: history.Acquire, Key: "k", Lease: lease, TTL: ttl, Owner: owner, Deadline: rec.Now() + ttl})
		if overlap && i == n-1 {
			rec.Record(history.Op{Type: history.Invoke, Process: 1, F: history.Acquire, Key: "k", Lease: "p1.1", TTL: ttl})
			rec.Record(history.Op{Type: history.OK, Process: 1, F: history.Acquire, Key: "k", Lease: "p1.1", TTL: ttl, Owner: "intruder", Deadline: rec.Now() + ttl})
		}
		rec.Record(history.Op{Type: history.Invoke, Process: 0, F: history.Release, Key: "k", Lease: lease, Owner: owner})
		rec.Record(history.Op{Type: history.OK, Process: 0, F: history.Release, Key: "k", Lease: lease, Owner: owner})
	}
	require.NoError(t, rec.Err())
	return dir
}

func TestCheckExitCodes(t *testing.T) {
	code, out, _ := deadbolt(t, "check", writeHistory(t, 12, false))
	require.Equal(t, exitOK, code, out)
	require.Contains(t, out, ": valid in ")

	code, out, _ = deadbolt(t, "check", writeHistory(t, 12, true))
	require.Equal(t, exitContradicts, code, out)
	require.Contains(t, out, "double-hold: double hold on key \"k\"")

	code, out, _ = deadbolt(t, "check", writeHistory(t, 2, false))
	require.Equal(t, exitUnknown, code, out)
	require.Contains(t, out, "idle run")

	corrupt := filepath.Join(t.TempDir(), "history.jsonl")
	require.NoError(t, os.WriteFile(corrupt, []byte("{\"index\":0,\"ti\n"), 0o644))
	code, _, stderr := deadbolt(t, "check", corrupt)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, stderr, "line 1: not a history operation")
}

// A stored run is re-checked with the checkers its scenario.json names: a
// lost update the lock-service checks cannot see is found once the run
// says it protected a counter.
func TestCheckTakesItsCheckersFromScenarioJSON(t *testing.T) {
	dir := writeHistory(t, 12, false)
	f, err := os.OpenFile(filepath.Join(dir, "history.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	ops, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	require.NoError(t, err)
	at := ops[len(ops)-1].Time
	enc := json.NewEncoder(f)
	for _, op := range []history.Op{
		{Type: history.Invoke, Process: history.HarnessProcess, F: history.Write, Key: "k", Value: history.Int(0)},
		{Type: history.OK, Process: history.HarnessProcess, F: history.Write, Key: "k", Value: history.Int(0)},
		{Type: history.Invoke, Process: 0, F: history.Write, Key: "k", Lease: "p0.a", Value: history.Int(1)},
		{Type: history.OK, Process: 0, F: history.Write, Key: "k", Lease: "p0.a", Prev: history.Int(0)},
		{Type: history.Invoke, Process: history.HarnessProcess, F: history.Read, Key: "k"},
		{Type: history.OK, Process: history.HarnessProcess, F: history.Read, Key: "k", Value: history.Int(0)},
	} {
		op.Index, op.Time = len(ops), at
		ops = append(ops, op)
		require.NoError(t, enc.Encode(op))
	}
	require.NoError(t, f.Close())

	code, out, _ := deadbolt(t, "check", dir)
	require.Equal(t, exitOK, code, out)
	require.Contains(t, out, "no scenario.json beside it")

	// A run stored in the old format (ttl_ms, the cluster's Go field
	// names, DownAfter in nanoseconds) still reads.
	spec := `{"scenario":"x","description":"","expect":"unsafe","seed":1,"lock":"simple","cluster":{"Topology":"independent","Masters":5,"DownAfter":1000000000},
	  "workload":"counter","checkers":["double-holds","lost-updates"],"nemesis":"none","fault":{},"clients":1,
	  "ttl_ms":10000,"hold_min_ms":0,"hold_max_ms":0,"pause_ms":0,"time_ms":1000,"min_acquires":10,"driver":["deadbolt","client"]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "scenario.json"), []byte(spec), 0o644))
	code, out, _ = deadbolt(t, "check", dir)
	require.Equal(t, exitContradicts, code, out)
	require.Contains(t, out, "workload counter, driver deadbolt client")
	require.Contains(t, out, "the resource lost 1 update")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "scenario.json"), []byte(`{"ttl_ms":1,"checkers":["nope"]}`), 0o644))
	code, _, stderr := deadbolt(t, "check", dir)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, stderr, `unknown checker "nope"`)
}

// A sharded matrix names the command its shards share: without the slice
// or where each wrote, in either flag form.
func TestWithoutFlagsDropsTheFlagAndItsValue(t *testing.T) {
	args := []string{"--locks", "simple", "--shard", "1/2", "-store=s1", "--seeds", "2", "--junit", "s1/junit.xml", "--shards-are-not-shard", "x"}
	require.Equal(t, []string{"--locks", "simple", "--seeds", "2", "--shards-are-not-shard", "x"}, withoutFlags(args, "shard", "store", "junit"))
}
