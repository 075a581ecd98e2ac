package cluster

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProcessAliveTellsDeadAndReusedPIDs(t *testing.T) {
	self := os.Getpid()
	require.True(t, processAlive(self, procStart(self)))
	require.False(t, processAlive(self, "1"), "same pid, other start time: a reused pid")

	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	require.False(t, processAlive(cmd.Process.Pid, ""), "an exited process")
	require.False(t, processAlive(0, ""))
}

func TestZombieCountsAsDead(t *testing.T) {
	cmd := exec.Command("true")
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	// Not yet waited for: a zombie.
	require.Eventually(t, func() bool { return !processAlive(pid, "") }, 5e9, 1e7)
	require.NoError(t, cmd.Wait())
}

func TestProcStatSurvivesOddCommandNames(t *testing.T) {
	state, start := procStat("42 (a) b (c)) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 777 19")
	require.Equal(t, "S", state)
	require.Equal(t, "777", start)
}
