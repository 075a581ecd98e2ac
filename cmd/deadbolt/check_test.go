package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
