package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history/historytest"
)

// A run that crashed while writing its history leaves the last line cut:
// check reads every complete line, says where it was cut, and gives the
// verdict of what it read.
func TestCheckReportsACutTailAndJudgesTheRest(t *testing.T) {
	dir := writeHistory(t, 12, false)
	path := filepath.Join(dir, "history.jsonl")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Count(string(b), "\n")
	require.NoError(t, os.WriteFile(path, append(b, `{"index":`+"99"+`,"time":12,"type":"inv`...), 0o644))

	code, out, stderr := deadbolt(t, "check", dir)
	require.Equal(t, exitOK, code, "%s%s", out, stderr)
	require.Contains(t, out, "CUT: line ")
	require.Contains(t, out, "the last, was cut short")
	require.Contains(t, out, ": valid in ")
	require.Contains(t, out, "The history was cut")
	require.Contains(t, out, "the "+strconv.Itoa(lines)+" operations before it were checked")
}

// Bad input is refused with the line that is wrong, exit 254: a corrupt
// line in the middle (a cut one can only be last), an ok acquire without
// the lock's token, a negative TTL.
func TestCheckRefusesBadLinesByNumber(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func([]string) []string
		want string
	}{
		"corrupt middle line": {func(ls []string) []string { ls[3] = `{"index":3,"ti`; return ls }, "line 4: not a history operation"},
		"ok acquire without owner": {func(ls []string) []string {
			ls[1] = strings.Replace(ls[1], `"owner":"a",`, ``, 1)
			return ls
		}, `line 2: ok acquire without an owner`},
		"negative ttl": {func(ls []string) []string {
			ls[0] = strings.Replace(ls[0], `"ttl":10000000000`, `"ttl":-1`, 1)
			return ls
		}, "line 1: negative ttl -1"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeHistory(t, 12, false)
			path := filepath.Join(dir, "history.jsonl")
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			require.NoError(t, os.WriteFile(path, []byte(strings.Join(tc.edit(lines), "\n")+"\n"), 0o644))
			code, out, stderr := deadbolt(t, "check", dir)
			require.Equal(t, exitBadInput, code, "%s%s", out, stderr)
			require.Contains(t, stderr, tc.want)
		})
	}
}

// A FIFO (or another non-regular file) in a history's place is refused at
// once, never opened and waited on.
func TestCheckRefusesAFIFO(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "history.jsonl"), 0o644))
	done := make(chan struct{})
	var code int
	var stderr string
	go func() {
		defer close(done)
		code, _, stderr = deadbolt(t, "check", dir)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("check waited on a FIFO")
	}
	require.Equal(t, exitBadInput, code)
	require.Contains(t, stderr, "not a regular file")

	// A FIFO for scenario.json beside a real history is refused too.
	dir = writeHistory(t, 12, false)
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "scenario.json"), 0o644))
	code, _, stderr = deadbolt(t, "check", dir)
	require.Equal(t, exitBadInput, code)
	require.Contains(t, stderr, "scenario.json is not a regular file")
}

// A signal stops a long check at once with exit 130: a check of a large
// history (seconds of work) is cancelled 200 ms in and returns well before
// it would have finished.
func TestCheckStopsOnASignal(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "history.jsonl"))
	require.NoError(t, err)
	h := historytest.Generate(historytest.Config{Keys: 4, Clients: 8, Ops: 1_000_000, Seed: 1})
	require.NoError(t, historytest.WriteJSONL(f, h.Ops))
	require.NoError(t, f.Close())

	full := time.Now()
	code, _, _ := deadbolt(t, "check", dir)
	whole := time.Since(full)
	require.NotEqual(t, exitInterrupted, code)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	var out, errOut bytes.Buffer
	start := time.Now()
	code = run(ctx, []string{"check", dir}, &out, &errOut)
	took := time.Since(start)
	require.Equal(t, exitInterrupted, code, "%s%s", out.String(), errOut.String())
	require.Contains(t, errOut.String(), "interrupted")
	require.Less(t, took, 200*time.Millisecond+whole/2, "the whole check took %s", whole)
}

// Bad input creates nothing: a store that does not exist yet is made only
// for a run that can start.
func TestBadInputMakesNoStore(t *testing.T) {
	for _, args := range [][]string{{"run", "nosuch"}, {"scenario", "nosuch"}, {"run", "failover-simple", "--clients", "0"}} {
		store := filepath.Join(t.TempDir(), "new-store")
		junit := filepath.Join(t.TempDir(), "new-dir", "junit.xml")
		code, _, _ := deadbolt(t, append(args, "--store", store)...)
		require.Equal(t, exitBadInput, code, "%v", args)
		require.NoDirExists(t, store, "%v", args)
		if args[0] == "scenario" {
			code, _, _ = deadbolt(t, append(args, "--junit", junit)...)
			require.Equal(t, exitBadInput, code)
			require.NoDirExists(t, filepath.Dir(junit))
		}
	}
}

// --model-steps is the lease-lock model's budget per search: the steps
// are printed, and a history whose search needs more is unknown (exit 2),
// the reason naming the budget; the same check twice prints the same.
func TestCheckModelSteps(t *testing.T) {
	dir := writeHistory(t, 12, false)
	code, out, stderr := deadbolt(t, "check", dir)
	require.Equal(t, exitOK, code, "%s%s", out, stderr)
	line := func(out string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "lease-lock model: ") {
				return l
			}
		}
		t.Fatalf("no steps line in %s", out)
		return ""
	}
	first := line(out)
	require.Contains(t, first, "(budget 2000000)")
	_, again, _ := deadbolt(t, "check", dir)
	require.Equal(t, first, line(again))

	code, out, stderr = deadbolt(t, "check", "--model-steps", "1", dir)
	require.Equal(t, exitUnknown, code, "%s%s", out, stderr)
	require.Contains(t, out, "the lease-lock model check spent its budget of 1 step on 1 key of 1 before deciding them")
	require.Contains(t, line(out), "(budget 1)")
}
