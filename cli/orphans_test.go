package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
)

// buildDeadbolt builds the real binary, and beside it the client binary
// it runs each client as (deadbolt-client), as make build does.
func buildDeadbolt(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "deadbolt")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/deadbolt").CombinedOutput()
	require.NoError(t, err, string(out))
	out, err = exec.Command("go", "build", "-o", filepath.Join(dir, client.OwnName), "../cmd/deadbolt-client").CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

// procs lists live processes whose command line contains all of words.
func procs(t *testing.T, words ...string) map[int]string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	out := map[int]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || len(b) == 0 {
			continue // gone, or a zombie
		}
		cmd := strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
		all := true
		for _, w := range words {
			all = all && strings.Contains(cmd, w)
		}
		if all {
			out[pid] = cmd
		}
	}
	return out
}

// After SIGINT, SIGTERM or SIGKILL of the harness in the middle of a run
// (one client stopped by pause-client at the time), no client process is
// left; the first two leave no container or network either, and a SIGKILL
// leaves them only until the next run sweeps them.
func TestSignalsLeaveNoClientContainerOrNetwork(t *testing.T) {
	clustertest.RequireDocker(t)
	bin := buildDeadbolt(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "run", "pause-simple", "--seed", "1", "--store", t.TempDir())
			stderr, err := cmd.StderrPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			defer cmd.Process.Kill()
			// Wait until the workload runs: its log line comes once the
			// cluster is up, then the clients start.
			lines := bufio.NewScanner(stderr)
			for lines.Scan() && !strings.Contains(lines.Text(), "client processes on") {
			}
			go func() {
				for lines.Scan() {
				}
			}()
			var clients map[int]string
			require.Eventually(t, func() bool {
				clients = procs(t, filepath.Join(filepath.Dir(bin), client.OwnName))
				return len(clients) == 4
			}, 30*time.Second, 20*time.Millisecond, "one process per client")
			for pid := range clients {
				stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
				require.NoError(t, err)
				f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
				require.Equal(t, strconv.Itoa(cmd.Process.Pid), f[1], "a child of the harness: %s", stat)
			}
			// Strike while the nemesis holds one of them stopped.
			require.Eventually(t, func() bool {
				for pid := range clients {
					stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
					if err != nil {
						continue
					}
					if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:])); len(f) > 0 && f[0] == "T" {
						return true
					}
				}
				return false
			}, 30*time.Second, 5*time.Millisecond, "pause-client stops a client (state T)")
			require.NoError(t, cmd.Process.Signal(sig))
			err = cmd.Wait()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "%v", err)
			if sig != syscall.SIGKILL {
				require.Equal(t, exitInterrupted, ee.ExitCode())
			}
			require.Eventually(t, func() bool { return len(procs(t, filepath.Join(filepath.Dir(bin), client.OwnName))) == 0 }, 10*time.Second, 10*time.Millisecond,
				"client processes outlived the harness")

			label := fmt.Sprintf("%s=%d", cluster.LabelPID, cmd.Process.Pid)
			left, err := cluster.Leftovers(context.Background(), label)
			require.NoError(t, err)
			if sig != syscall.SIGKILL {
				require.Empty(t, left)
				return
			}
			require.NotEmpty(t, left, "SIGKILL allows no cleanup")
			require.NoError(t, cluster.Sweep(context.Background()), "the next run's first step")
			left, err = cluster.Leftovers(context.Background(), label)
			require.NoError(t, err)
			require.Empty(t, left)
		})
	}
}

// A SIGINT at any moment of a run exits 130 and leaves nothing behind: 3 s
// after the start (the cluster starting), when the nemesis marks the heal
// in the history, and once the harness starts checking (the check and the
// reports that follow it). A run that finished writing its reports still
// gives no verdict once it was interrupted.
func TestSIGINTAtEveryPhaseExits130AndLeavesNothing(t *testing.T) {
	clustertest.RequireDocker(t)
	bin := buildDeadbolt(t)
	moments := []struct {
		name string
		wait func(t *testing.T, store string, lines <-chan string)
	}{
		{"at 3s", func(*testing.T, string, <-chan string) { time.Sleep(3 * time.Second) }},
		{"at the heal", func(t *testing.T, store string, _ <-chan string) {
			require.Eventually(t, func() bool {
				hs, _ := filepath.Glob(filepath.Join(store, "pause-simple", "*", "history.jsonl"))
				for _, h := range hs {
					if b, err := os.ReadFile(h); err == nil && strings.Contains(string(b), `"phase":"heal"`) {
						return true
					}
				}
				return false
			}, 2*time.Minute, 5*time.Millisecond, "the heal is marked in the history")
		}},
		{"during the check and the reports", func(t *testing.T, _ string, lines <-chan string) {
			for l := range lines {
				if strings.Contains(l, "checking") && strings.Contains(l, "operations") {
					return
				}
			}
			t.Fatal("the run ended before its check")
		}},
	}
	for _, m := range moments {
		t.Run(m.name, func(t *testing.T) {
			store := t.TempDir()
			cmd := exec.Command(bin, "run", "pause-simple", "--seed", "1", "--store", store)
			stderr, err := cmd.StderrPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			defer cmd.Process.Kill()
			lines := make(chan string, 1024)
			go func() {
				defer close(lines)
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					select {
					case lines <- sc.Text():
					default: // nobody waits on lines: drop them
					}
				}
			}()
			m.wait(t, store, lines)
			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
			err = cmd.Wait()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "exit 0 after an interrupt: %v", err)
			require.Equal(t, exitInterrupted, ee.ExitCode())
			require.Eventually(t, func() bool { return len(procs(t, filepath.Join(filepath.Dir(bin), client.OwnName))) == 0 }, 10*time.Second, 10*time.Millisecond,
				"client processes outlived the harness")
			left, err := cluster.Leftovers(context.Background(), fmt.Sprintf("%s=%d", cluster.LabelPID, cmd.Process.Pid))
			require.NoError(t, err)
			require.Empty(t, left)
		})
	}
}

// A suite keeps a finished run's cluster for a later run of its topology
// (cluster.Pool). A SIGINT while one is kept and another run goes on
// leaves neither behind.
func TestSIGINTWithAKeptClusterLeavesNothing(t *testing.T) {
	clustertest.RequireDocker(t)
	bin := buildDeadbolt(t)
	// The schedule's order: pause-in-release-get-then-del, then delay-bsm
	// on another topology while the first's cluster waits for crash-no-ttl
	// (too short to go before delay-bsm).
	cmd := exec.Command(bin, "scenario", "pause-in-release-get-then-del", "delay-bsm", "crash-no-ttl", "--parallel", "1", "--seed", "1", "--store", t.TempDir())
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stderr)
	for lines.Scan() && !strings.Contains(lines.Text(), "delay-bsm: starting") {
	}
	for lines.Scan() && !strings.Contains(lines.Text(), "client processes on") {
	}
	go func() {
		for lines.Scan() {
		}
	}()
	label := fmt.Sprintf("%s=%d", cluster.LabelPID, cmd.Process.Pid)
	left, err := cluster.Leftovers(context.Background(), label)
	require.NoError(t, err)
	require.Contains(t, strings.Join(left, " "), "-resource", "delay-bsm's cluster runs")
	runs := 0
	for _, l := range left {
		if strings.HasPrefix(l, "network ") && strings.HasSuffix(l, "-clients") {
			runs++
		}
	}
	require.Equal(t, 2, runs, "pause-in-release-get-then-del's cluster is kept beside delay-bsm's: %v", left)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "exit 0 after an interrupt: %v", err)
	require.Equal(t, exitInterrupted, ee.ExitCode())
	left, err = cluster.Leftovers(context.Background(), label)
	require.NoError(t, err)
	require.Empty(t, left)
}
