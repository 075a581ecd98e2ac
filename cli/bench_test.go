package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const benchInput = `BenchmarkAcquireRelease/ceiling-2   4000   100000 ns/op   482 B/op   9 allocs/op
BenchmarkAcquireRelease/simple-2    4000   110000 ns/op  1434 B/op  25 allocs/op
PASS
`

func TestBenchReadsStdinOrFiles(t *testing.T) {
	old := stdin
	defer func() { stdin = old }()
	stdin = strings.NewReader(benchInput)
	code, out, _ := deadbolt(t, "bench")
	require.Equal(t, exitOK, code)
	require.Regexp(t, `AcquireRelease/simple\s+1\s+110000\s+0%\s+9091\s+25\s+1434\s+0\.91x`, out)
	require.Regexp(t, `simple >= 0\.95x ceiling\s+0\.91x\s+MISSED`, out)

	stdin = strings.NewReader(benchInput)
	code, out, _ = deadbolt(t, "bench", "--strict")
	require.Equal(t, exitContradicts, code, "a missed target fails under --strict")
	require.Contains(t, out, `target "simple >= 0.95x ceiling" not met`)

	file := filepath.Join(t.TempDir(), "bench.txt")
	require.NoError(t, os.WriteFile(file, []byte(benchInput+"--- FAIL: BenchmarkAcquireRelease/fair\nFAIL\n"), 0o644))
	code, out, _ = deadbolt(t, "bench", file)
	require.Equal(t, exitContradicts, code, "a failed benchmark fails the table")
	require.Contains(t, out, "FAILED: BenchmarkAcquireRelease/fair")

	stdin = strings.NewReader("PASS\n")
	code, _, stderr := deadbolt(t, "bench")
	require.Equal(t, exitBadInput, code)
	require.Contains(t, stderr, "no benchmark results")
	code, _, stderr = deadbolt(t, "bench", "/no/such/file")
	require.Equal(t, exitBadInput, code)
	require.Contains(t, stderr, "no such file")
}
