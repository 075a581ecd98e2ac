package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/google/shlex"
	"github.com/stretchr/testify/require"
)

// A word a shell would split, expand or glob is quoted, and the quoted
// line splits back into the words (as client.ParseCommand splits).
func TestShellJoinSplitsBackIntoItsWords(t *testing.T) {
	require.Equal(t, "redlock", ShellQuote("redlock"))
	require.Equal(t, "store/pause-simple/20260102T030405.000Z", ShellQuote("store/pause-simple/20260102T030405.000Z"))
	require.Equal(t, "failover-simple@redsync@v4.0.4", ShellQuote("failover-simple@redsync@v4.0.4"))
	require.Equal(t, "''", ShellQuote(""))
	require.Equal(t, "'python3 drivers/redispy/driver.py'", ShellQuote("python3 drivers/redispy/driver.py"))
	require.Equal(t, `'it'\''s'`, ShellQuote("it's"))
	require.Equal(t, "'=x'", ShellQuote("=x"))
	for _, words := range [][]string{
		{"run", "pause-simple", "--seed", "7"},
		{"run", "--file", "my scenarios/x.json", "--driver", `python3 -c 'print("$HOME")' *`},
		{"a'b", `c"d`, `e\f`, "g h", "$(rm -rf /)", "~user", "x;y", "a|b&c", "", "tab\there"},
	} {
		got, err := shlex.Split(ShellJoin(words))
		require.NoError(t, err)
		require.Equal(t, words, got, ShellJoin(words))
	}
}

// The reports' re-run line is the run's own: its recorded arguments,
// quoted; results.json of an older run, which has none, gives what it
// knows (server, driver) rather than another lock's run.
func TestTheReportsRerunTheRunAsItRan(t *testing.T) {
	r := &Results{Scenario: "pause-simple", Seed: 42, Lock: "redlock", Dir: "store/pause-simple/20260102T030405.000Z",
		Rerun: []string{"run", "pause-simple", "--seed", "42", "--lock", "redlock", "--nemesis", "random", "--faults", "kill,pause-node",
			"--time", "30s", "--clients", "3", "--tls", "--server", "valkey-8.1", "--driver", "python3 drivers/redispy/driver.py"}}
	want := "deadbolt run pause-simple --seed 42 --lock redlock --nemesis random --faults kill,pause-node --time 30s --clients 3 --tls --server valkey-8.1 --driver 'python3 drivers/redispy/driver.py'"
	require.Equal(t, want, RerunCommand(r))
	require.Contains(t, Markdown(r), "Re-run: `"+want+"`.")
	require.Contains(t, Markdown(r), "Re-check: `deadbolt check store/pause-simple/20260102T030405.000Z`.")

	file := &Results{Scenario: "mine", Seed: 3, Rerun: []string{"run", "--file", "my runs/mine.json", "--seed", "3"}}
	require.Equal(t, "deadbolt run --file 'my runs/mine.json' --seed 3", RerunCommand(file))

	old := &Results{Scenario: "failover-simple", Seed: 9, Driver: "python3 d.py", Server: Server{Name: "valkey-8.1"}}
	require.Equal(t, "deadbolt run failover-simple --seed 9 --server valkey-8.1 --driver 'python3 d.py'", RerunCommand(old))
	require.Equal(t, "deadbolt run failover-simple --seed 9", RerunCommand(&Results{Scenario: "failover-simple", Seed: 9, Server: Server{Name: DefaultServer}}))
}

// The HTML report and a suite's JUnit case print the same line.
func TestHTMLAndJUnitRerunTheRunAsItRan(t *testing.T) {
	r := &Results{Scenario: "pause-simple", Seed: 42, Lock: "redlock", Verdict: "valid", Expected: "safe", Matches: true, Health: "ok",
		Dir: "store/pause-simple/t", Rerun: []string{"run", "pause-simple", "--seed", "42", "--lock", "redlock", "--driver", "python3 d.py"}}
	var b strings.Builder
	require.NoError(t, templates.ExecuteTemplate(&b, "report.html", runPage{R: r}))
	require.Contains(t, b.String(), "Re-run: <code>deadbolt run pause-simple --seed 42 --lock redlock --driver &#39;python3 d.py&#39;</code>")
	var j strings.Builder
	require.NoError(t, WriteJUnit(&j, []SuiteRun{{Name: "pause-simple", Results: r}}, time.Time{}, 0))
	require.Contains(t, j.String(), "re-run: deadbolt run pause-simple --seed 42 --lock redlock --driver &#39;python3 d.py&#39;")
}
