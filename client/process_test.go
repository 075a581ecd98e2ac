package client_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/endpoints"
)

const envHarness = "DEADBOLT_TEST_HARNESS"

func TestMain(m *testing.M) {
	if n := os.Getenv(envHarness); n != "" {
		harness(n)
		return
	}
	clienttest.Main(m)
}

// harness plays a harness for the orphan test: it starts n drivers, pauses
// the first, prints their pids and waits to be killed.
func harness(n string) {
	count, _ := strconv.Atoi(n)
	os.Unsetenv(envHarness) // the drivers inherit the environment
	for i := 0; i < count; i++ {
		p, err := client.Start(clienttest.Command(), client.Options{})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		if i == 0 {
			_ = p.Pause()
		}
		fmt.Println(p.PID())
	}
	select {}
}

func start(t *testing.T, o client.Options) *client.Process {
	t.Helper()
	p, err := client.Start(clienttest.Command(), o)
	require.NoError(t, err)
	t.Cleanup(p.Kill)
	return p
}

func call(t *testing.T, p *client.Process, req client.Request) client.Reply {
	t.Helper()
	r, err := p.Call(context.Background(), req, 10*time.Second)
	require.NoError(t, err)
	return r
}

func open(t *testing.T, p *client.Process, c *cluster.Cluster, lock string, ttl time.Duration) {
	t.Helper()
	e := c.Endpoints()
	r := call(t, p, client.Request{Op: client.OpOpen, Lock: lock, TTLMS: ttl.Milliseconds(), Endpoints: &e})
	require.Equal(t, client.OutcomeOK, r.Outcome, r.Error)
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	for i := len(s) - 1; i > 0; i-- {
		if s[i] == ')' {
			return s[i+2] != 'Z' && s[i+2] != 'X'
		}
	}
	return true
}

// SIGKILL of the harness cannot run any cleanup: its clients must still
// die, a paused one included.
func TestClientsDieWhenTheHarnessIsKilled(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	h := exec.Command(exe)
	h.Env = append(os.Environ(), envHarness+"=3")
	out, err := h.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, h.Start())
	defer h.Process.Kill()
	sc := bufio.NewScanner(out)
	var pids []int
	for len(pids) < 3 && sc.Scan() {
		pid, err := strconv.Atoi(sc.Text())
		require.NoError(t, err, sc.Text())
		pids = append(pids, pid)
	}
	require.Len(t, pids, 3)
	for _, pid := range pids {
		require.True(t, alive(pid))
	}
	require.NoError(t, h.Process.Kill())
	_ = h.Wait()
	require.Eventually(t, func() bool {
		for _, pid := range pids {
			if alive(pid) {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, "client processes outlived their harness")
}

func TestDriverSaysHelloAndRejectsBadRequests(t *testing.T) {
	p := start(t, client.Options{})
	require.Equal(t, client.ProtocolVersion, p.Hello().Protocol)
	require.Equal(t, p.PID(), p.Hello().PID)
	require.Contains(t, p.Hello().Locks, "simple")

	r := call(t, p, client.Request{Op: client.OpAcquire, Key: "k", Lease: "p0.1"})
	require.Equal(t, client.OutcomeFail, r.Outcome)
	require.Contains(t, r.Error, "first request must be open")
	r = call(t, p, client.Request{Op: client.OpOpen, Lock: "nope", TTLMS: 1000, Endpoints: &endpoints.Endpoints{}})
	require.Equal(t, client.OutcomeFail, r.Outcome)
	require.Contains(t, r.Error, `unknown lock "nope"`)
	r = call(t, p, client.Request{Op: "frobnicate"})
	require.Equal(t, client.OutcomeFail, r.Outcome)
}

// A driver's stdin closing (the harness is done or gone) ends it.
func TestDriverExitsWhenStdinCloses(t *testing.T) {
	p := start(t, client.Options{})
	p.Close(5 * time.Second)
	select {
	case <-p.Exited():
	default:
		t.Fatal("Close returned before the driver exited")
	}
	_, err := p.Call(context.Background(), client.Request{Op: client.OpAcquire}, time.Second)
	require.ErrorIs(t, err, client.ErrNotSent)
}

// A driver that stops answering without the harness having paused it is
// hung: the call ends info and the driver is killed.
func TestHungDriverTimesOutAndIsKilled(t *testing.T) {
	p := start(t, client.Options{})
	require.NoError(t, syscall.Kill(p.PID(), syscall.SIGSTOP))
	// The stop lands when the kernel gets to every thread, not at kill's
	// return: a driver still busy after its hello answered first.
	require.Eventually(t, func() bool { return p.State() == "T" }, 5*time.Second, time.Millisecond)
	_, err := p.Call(context.Background(), client.Request{Op: "frobnicate"}, 200*time.Millisecond)
	require.ErrorIs(t, err, client.ErrNoReply)
	<-p.Exited()
}

func TestLockAndResourceOverTheProtocol(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1, Resource: true})
	a, b := start(t, client.Options{}), start(t, client.Options{})
	open(t, a, c, "fenced", 5*time.Second)
	open(t, b, c, "fenced", 5*time.Second)

	before := time.Now()
	r := call(t, a, client.Request{Op: client.OpAcquire, Key: "k", Lease: "p0.1"})
	require.Equal(t, client.OutcomeOK, r.Outcome, r.Error)
	require.NotEmpty(t, r.Token)
	require.Equal(t, int64(1), r.Fence)
	require.Positive(t, r.DeadlineMonoNS)

	r = call(t, b, client.Request{Op: client.OpAcquire, Key: "k", Lease: "p1.1"})
	require.Equal(t, client.OutcomeFail, r.Outcome)
	require.True(t, r.Refused, "a held key is a refusal, not an outage")

	r = call(t, a, client.Request{Op: client.OpResource, Command: []any{"SET", "counter", 41, "GET"}})
	require.Equal(t, client.OutcomeOK, r.Outcome, r.Error)
	require.Nil(t, r.Reply, "no previous value")
	r = call(t, a, client.Request{Op: client.OpResource, Command: []any{"INCR", "counter"}})
	require.Equal(t, float64(42), r.Reply)
	r = call(t, a, client.Request{Op: client.OpResource, Command: []any{"HSET", "counter", "f", "v"}})
	require.Equal(t, client.OutcomeFail, r.Outcome, "an error reply had no effect")
	require.Contains(t, r.Error, "WRONGTYPE")

	require.Equal(t, client.OutcomeOK, call(t, a, client.Request{Op: client.OpRelease, Lease: "p0.1"}).Outcome)
	r = call(t, a, client.Request{Op: client.OpRelease, Lease: "p0.1"})
	require.Equal(t, client.OutcomeFail, r.Outcome)
	r = call(t, b, client.Request{Op: client.OpAcquire, Key: "k", Lease: "p1.2"})
	require.Equal(t, client.OutcomeOK, r.Outcome)
	require.Equal(t, int64(2), r.Fence)
	require.Less(t, time.Since(before), 5*time.Second)
}

// A pause is a real SIGSTOP of the whole process, and a call waiting on a
// paused client is not timed out for the time it spent stopped.
func TestPauseIsARealStopThatCallsOutwait(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1, Resource: true})
	p := start(t, client.Options{})
	open(t, p, c, "simple", time.Second)
	require.NoError(t, p.Pause())
	require.Equal(t, "T", p.State())

	done := make(chan error, 1)
	go func() {
		_, err := p.Call(context.Background(), client.Request{Op: client.OpResource, Command: []any{"PING"}}, 300*time.Millisecond)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a paused client answered: %v", err)
	case <-time.After(time.Second):
	}
	require.NoError(t, p.Resume())
	require.NoError(t, <-done, "the paused time does not count against the reply timeout")
	require.NotEqual(t, "T", p.State())
}

// An armed point stops the driver inside the lock: get-then-del after its
// GET saw its own token and before its DEL.
func TestArmedPointStopsTheDriverInsideTheLock(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	// The event is written before the driver stops, but the reader may take
	// it after /proc shows T: receive it, never inspect a slice under a lock
	// the reader also needs.
	stops := make(chan client.Event, 4)
	p := start(t, client.Options{OnEvent: func(ev client.Event) {
		if ev.Event == client.EventStopped {
			stops <- ev
		}
	}})
	open(t, p, c, "get-then-del", 5*time.Second)
	r := call(t, p, client.Request{Op: client.OpAcquire, Key: "k", Lease: "p0.1"})
	require.Equal(t, client.OutcomeOK, r.Outcome)

	p.Arm("after-get")
	released := make(chan client.Reply, 1)
	go func() { released <- call(t, p, client.Request{Op: client.OpRelease, Lease: "p0.1"}) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, p.WaitState(ctx, "T"))
	var stop client.Event
	select {
	case stop = <-stops:
	case <-ctx.Done():
		t.Fatal("stopped without a stopped event")
	}
	require.Equal(t, "after-get", stop.Point)
	require.Equal(t, "k", stop.Key)

	rdb := c.ByRole(cluster.RoleRedis)[0].Client()
	defer rdb.Close()
	n, err := rdb.Exists(ctx, "k").Result()
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "stopped before its DEL")
	require.NoError(t, p.Resume())
	require.Equal(t, client.OutcomeOK, (<-released).Outcome)
	require.Equal(t, int64(0), rdb.Exists(ctx, "k").Val())
	require.Empty(t, stops, "one stop for one armed point")
}

// A crash is a SIGKILL: the pending call's outcome is unknown and the
// driver's deferred release never runs.
func TestKillLeavesTheLockHeld(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	p := start(t, client.Options{})
	open(t, p, c, "simple", 5*time.Second)
	require.Equal(t, client.OutcomeOK, call(t, p, client.Request{Op: client.OpAcquire, Key: "k", Lease: "p0.1"}).Outcome)
	require.NoError(t, p.Pause())
	done := make(chan error, 1)
	go func() {
		_, err := p.Call(context.Background(), client.Request{Op: client.OpRelease, Lease: "p0.1"}, 5*time.Second)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // the release is in the pipe, unread
	p.Kill()
	err := <-done
	require.True(t, errors.Is(err, client.ErrExited) || errors.Is(err, client.ErrNotSent), "%v", err)
	rdb := c.ByRole(cluster.RoleRedis)[0].Client()
	defer rdb.Close()
	require.Equal(t, int64(1), rdb.Exists(context.Background(), "k").Val())
}

// OnSent hears each request at its write, before its reply is read;
// Answered tells a request answered from one outstanding; Pause returns
// once every thread of the (multi-threaded Go) driver is stopped.
func TestTheHarnessSeesWhenARequestWasSentAndAnswered(t *testing.T) {
	var sent []client.Request
	var at time.Time
	p := start(t, client.Options{OnSent: func(req client.Request, when time.Time) {
		sent, at = append(sent, req), when
	}})
	require.False(t, p.Answered(1))
	before := time.Now()
	// Before open, an acquire fails at once: no Redis needed.
	rep := call(t, p, client.Request{Op: client.OpAcquire, Key: "k", Lease: "p0.1"})
	require.Equal(t, client.OutcomeFail, rep.Outcome)
	require.Len(t, sent, 1)
	require.Equal(t, rep.ID, sent[0].ID)
	require.Equal(t, client.OpAcquire, sent[0].Op)
	require.False(t, at.Before(before))
	require.True(t, p.Answered(rep.ID))
	require.False(t, p.Answered(rep.ID+1), "the next request is not answered yet")
	require.Equal(t, 0, p.Unread(), "nothing the driver wrote waits unread")

	require.NoError(t, p.Pause())
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", p.PID()))
	require.NoError(t, err)
	require.Greater(t, len(tasks), 1, "the Go driver runs several threads")
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", p.PID(), task.Name()))
		require.NoError(t, err)
		s := string(b)
		require.Equal(t, "T", s[strings.LastIndexByte(s, ')')+2:][:1], "thread %s stopped", task.Name())
	}
	require.NoError(t, p.Resume())
}
