package cluster

import (
	"context"
	"github.com/moby/moby/client"
	"os"
	"os/exec"
	"strconv"
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

// A dead pid means something only on the host that labelled the run: on a
// shared Docker engine another machine's live run must survive the sweep.
func TestSweepLeavesOtherHostsRunsAlone(t *testing.T) {
	ctx := context.Background()
	if err := Available(ctx); err != nil {
		t.Skip(err)
	}
	d, err := newDocker(ctx)
	require.NoError(t, err)
	defer d.cli.Close()
	const deadPID = "999999999"
	create := func(name, host string) string {
		labels := map[string]string{LabelRun: name, LabelPID: deadPID, LabelProcStart: "1"}
		if host != "" {
			labels[LabelHost] = host
		}
		r, err := d.cli.NetworkCreate(ctx, name, client.NetworkCreateOptions{Driver: "bridge", Internal: true, Labels: labels})
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = d.cli.NetworkRemove(context.Background(), r.ID, client.NetworkRemoveOptions{}) })
		return name
	}
	suffix := strconv.Itoa(os.Getpid())
	foreign := create("deadbolt-test-foreign-"+suffix, "another-boot/pid:[1]")
	mine := create("deadbolt-test-mine-"+suffix, hostIdentity())
	require.NoError(t, d.sweep(ctx))

	left, err := Leftovers(ctx, LabelRun+"="+foreign)
	require.NoError(t, err)
	require.Len(t, left, 1, "another host's run is not ours to judge")
	left, err = Leftovers(ctx, LabelRun+"="+mine)
	require.NoError(t, err)
	require.Empty(t, left, "a dead run of this host is swept")
}
