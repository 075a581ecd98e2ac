package cli

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/google/shlex"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/reports"
)

// parseRunFlags parses args as `deadbolt run` does.
func parseRunFlags(t *testing.T, args []string) (runFlags, []string) {
	t.Helper()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var f runFlags
	f.register(fs, true)
	pos, err := parse(fs, args)
	require.NoError(t, err)
	return f, pos
}

// The re-run line carries every option of `deadbolt run` but --seed (each
// run's own) and --store, and parses back into the options the run had.
func TestTheRerunCarriesEveryRunOption(t *testing.T) {
	args := []string{"pause-simple", "--seed", "7", "--store", "elsewhere", "--time", "1m30s", "--clients", "4", "--lock", "redsync@v4.0.4",
		"--lock-mix", "redsync@v4.0.3:1", "--lock-mix", "simple:1", "--lock-option", "tries=3", "--lock-option", "read_timeout=200ms",
		"--min-replicas-to-write", "0", "--min-replicas-max-lag", "5",
		"--workload", "counter", "--nemesis", "random", "--faults", "kill,pause-node", "--tls", "--server", "valkey-8.1",
		"--target", "my deployment.json", "--driver", `python3 "drivers/my driver.py" --verbose`}
	f, pos := parseRunFlags(t, args)
	require.Equal(t, []string{"pause-simple"}, pos)
	inv := f.invocation("")
	require.Empty(t, inv.File)

	// Every flag run registers is in it, but the two each run sets alone.
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	(&runFlags{}).register(fs, true)
	fs.VisitAll(func(fl *flag.Flag) {
		if fl.Name == "seed" || fl.Name == "store" {
			require.NotContains(t, inv.Flags, "--"+fl.Name)
			return
		}
		require.Contains(t, inv.Flags, "--"+fl.Name, "the re-run line leaves out --%s", fl.Name)
	})

	// The line, split as a shell splits it, is the same run again.
	line := reports.ShellJoin(append([]string{"pause-simple", "--seed", "7", "--store", "elsewhere"}, inv.Flags...))
	words, err := shlex.Split(line)
	require.NoError(t, err)
	again, pos := parseRunFlags(t, words)
	require.Equal(t, []string{"pause-simple"}, pos)
	require.Equal(t, f, again)
	require.Contains(t, line, `--driver 'python3 "drivers/my driver.py" --verbose'`)
	require.Contains(t, line, "--target 'my deployment.json'")
	require.Contains(t, line, "--lock-mix redsync@v4.0.3:1,simple:1")
	require.Contains(t, line, "--lock-option read_timeout=200ms --lock-option tries=3", "each knob its own flag, in order")
}

// Options left at their defaults are not on the line; a file's run names
// its file; the suite's and the matrix's flags are the shared ones.
func TestTheRerunLeavesOutWhatWasNotGiven(t *testing.T) {
	f, _ := parseRunFlags(t, []string{"--seed", "3"})
	require.Empty(t, f.invocation("").Flags)
	require.Equal(t, "x.json", f.invocation("x.json").File)

	fs := flag.NewFlagSet("scenario", flag.ContinueOnError)
	var s runFlags
	s.register(fs, false)
	_, err := parse(fs, []string{"--server", "redis-8.0", "--tls", "--store", "s", "--driver", "python3 d.py"})
	require.NoError(t, err)
	require.Equal(t, []string{"--tls", "--server", "redis-8.0", "--driver", "python3 d.py"}, s.invocation("").Flags)
	require.False(t, slices.ContainsFunc(s.invocation("").Flags, func(a string) bool { return strings.HasPrefix(a, "--store") }))
}
