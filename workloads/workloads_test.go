package workloads_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis/nemesistest"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

func TestMain(m *testing.M) { clienttest.Main(m) }

// config is a workload on the fake cluster c.
func config(c *nemesistest.Cluster, lock string, rec *history.Recorder) workloads.Config {
	return workloads.Config{
		Shape: workloads.Shape{Clients: 4, Keys: []string{"a", "b"}, TTL: workloads.Duration(2 * time.Second), HoldMin: workloads.Duration(5 * time.Millisecond), HoldMax: workloads.Duration(30 * time.Millisecond), Pause: workloads.Duration(5 * time.Millisecond)},
		Seed:  1, Lock: lock, Endpoints: c.Endpoints(), Driver: clienttest.Command(), Rec: rec,
	}
}

// run drives a workload until its history so far satisfies enough, and
// returns the history, written to JSON and read back as a checker would.
func run(t *testing.T, name string, cfg workloads.Config, enough func([]history.Op) bool, during func(*workloads.Runner)) []history.Op {
	t.Helper()
	var buf bytes.Buffer
	cfg.Rec = history.NewRecorder(&buf)
	r, err := workloads.NewRunner(name, cfg)
	require.NoError(t, err)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background(), stop) }()
	if during != nil {
		during(r)
	}
	require.Eventually(t, func() bool { return enough(cfg.Rec.Ops()) }, time.Minute, 10*time.Millisecond, "the run gathered what the test judges")
	close(stop)
	require.NoError(t, <-done)
	require.Empty(t, children(t), "no client process outlives its run")
	ops, err := history.Parse(&buf)
	require.NoError(t, err)
	pairs, err := history.Pair(ops)
	require.NoError(t, err)
	for _, p := range pairs {
		require.NotNil(t, p.Complete, "every operation completes when the workload stops: %+v", p.Invoke)
	}
	return ops
}

// children lists this process's live child processes from /proc.
func children(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if ppid, _ := strconv.Atoi(f[1]); ppid == os.Getpid() && f[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// grants is a condition: at least n ok acquires by clients that match p.
func grants(n int, p func(history.Op) bool) func([]history.Op) bool {
	return func(ops []history.Op) bool { return count(ops, history.Acquire, history.OK, p) >= n }
}

func count(ops []history.Op, f history.F, t history.Type, p func(history.Op) bool) int {
	n := 0
	for _, op := range ops {
		if op.F == f && op.Type == t && op.Process >= 0 && (p == nil || p(op)) {
			n++
		}
	}
	return n
}

func finalRead(t *testing.T, ops []history.Op, key string) int64 {
	t.Helper()
	for i := len(ops) - 1; i >= 0; i-- {
		if op := ops[i]; op.Process == history.HarnessProcess && op.F == history.Read && op.Type == history.OK && op.Key == key {
			return *op.Value
		}
	}
	t.Fatalf("no final read of %s", key)
	return 0
}

// With a correct lock and no fault, every increment lands: the register
// ends at the number of acknowledged writes, and no write replaced anything
// but the value it read.
func TestIncrementsAllLandUnderACorrectLock(t *testing.T) {
	c := nemesistest.StartWith(t, nemesistest.Options{Topology: cluster.Independent, Masters: 1, Resource: true})
	for _, tc := range []struct{ workload, lock string }{{"counter", "simple"}, {"fenced", "fenced"}} {
		t.Run(tc.workload, func(t *testing.T) {
			wrote := func(ops []history.Op) bool {
				return count(ops, history.Write, history.OK, func(op history.Op) bool { return op.Key == "a" }) >= 5 &&
					count(ops, history.Write, history.OK, func(op history.Op) bool { return op.Key == "b" }) >= 5
			}
			ops := run(t, tc.workload, config(c, tc.lock, nil), wrote, nil)
			for _, k := range []string{"a", "b"} {
				onKey := func(op history.Op) bool { return op.Key == k }
				writes := count(ops, history.Write, history.OK, onKey)
				require.Positive(t, writes)
				require.Equal(t, int64(writes), finalRead(t, ops, k))
			}
			for _, op := range ops {
				if op.F == history.Write && op.Type == history.OK && op.Process >= 0 {
					require.NotNil(t, op.Prev)
				}
				if op.F.IsResource() && op.Type == history.Invoke && tc.workload == "fenced" && op.Process >= 0 {
					require.Positive(t, op.Fence, "fenced accesses carry the lease's token")
				}
			}
			require.Zero(t, count(ops, history.Write, history.Fail, nil), "no stale token without a fault")
		})
	}
}

func TestOrdersSellOncePerUserUnderACorrectLock(t *testing.T) {
	c := nemesistest.StartWith(t, nemesistest.Options{Topology: cluster.Independent, Masters: 1, Resource: true})
	contended := func(ops []history.Op) bool {
		return count(ops, history.Order, history.OK, nil) >= 5 && count(ops, history.Acquire, history.Fail, func(op history.Op) bool { return op.Refused }) > 0
	}
	ops := run(t, "orders", config(c, "simple", nil), contended, nil)
	sold := count(ops, history.Order, history.OK, nil)
	require.Positive(t, sold)
	var total int64
	for _, op := range ops {
		if op.Process == history.HarnessProcess && op.F == history.Read && op.Type == history.OK && strings.HasPrefix(op.Key, workloads.OrderKeyPrefix) {
			require.Equal(t, int64(1), *op.Value, "%s ordered once", op.Key)
			total++
		}
	}
	require.Equal(t, int64(sold), total)
	require.Equal(t, workloads.Stock-total, finalRead(t, ops, "stock"))
	require.Positive(t, count(ops, history.Acquire, history.Fail, func(op history.Op) bool { return op.Refused }),
		"clients contend for one user's lock")
}

// Each client is one OS process of its own while the run goes.
func TestOneProcessPerClient(t *testing.T) {
	c := nemesistest.StartWith(t, nemesistest.Options{Topology: cluster.Independent, Masters: 1})
	cfg := config(c, "reentrant", nil)
	run(t, "mutex", cfg, grants(1, nil), func(r *workloads.Runner) {
		require.Eventually(t, func() bool {
			pids := map[int]bool{}
			for i := 0; i < cfg.Clients; i++ {
				_, p, err := r.Client(i)
				if err != nil {
					return false
				}
				pids[p.PID()] = true
			}
			kids := children(t)
			for _, k := range kids {
				if !pids[k] {
					return false
				}
			}
			return len(pids) == cfg.Clients && len(kids) == cfg.Clients
		}, 10*time.Second, 10*time.Millisecond)
	})
}

// A client that stops answering without the harness having paused it is
// hung: its operation ends info and a new process with a new id goes on.
func TestHungClientIsReplaced(t *testing.T) {
	c := nemesistest.StartWith(t, nemesistest.Options{Topology: cluster.Independent, Masters: 1})
	cfg := config(c, "simple", nil)
	cfg.Clients, cfg.ReplyTimeout = 1, 300*time.Millisecond
	var hung int
	replaced := func(ops []history.Op) bool {
		return grants(1, func(op history.Op) bool { return op.Process > 0 })(ops)
	}
	ops := run(t, "mutex", cfg, replaced, func(r *workloads.Runner) {
		var pid int
		require.Eventually(t, func() bool {
			_, p, err := r.Client(0)
			if err == nil {
				pid = p.PID()
			}
			return err == nil
		}, 10*time.Second, 5*time.Millisecond)
		require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
		hung = pid
	})
	require.NotZero(t, hung)
	infos := 0
	last := 0
	for _, op := range ops {
		if op.Type == history.Info && strings.Contains(op.Error, "no reply in time") {
			infos++
		}
		last = max(last, op.Process)
	}
	require.Equal(t, 1, infos, "the hung request ended info")
	require.Positive(t, last, "a new process id took over")
	require.Positive(t, count(ops, history.Acquire, history.OK, func(op history.Op) bool { return op.Process > 0 }))
}

func TestBadConfigurationsAreRejected(t *testing.T) {
	rec := history.NewRecorder(nil)
	_, err := workloads.NewRunner("nope", workloads.Config{})
	require.ErrorContains(t, err, `unknown workload "nope"`)
	_, err = workloads.NewRunner("mutex", workloads.Config{Shape: workloads.Shape{Clients: 0, TTL: workloads.Duration(time.Second)}, Rec: rec})
	require.ErrorContains(t, err, "at least one client")
	_, err = workloads.NewRunner("mutex", workloads.Config{Shape: workloads.Shape{Clients: 1, TTL: workloads.Duration(time.Second)}, Rec: rec})
	require.ErrorContains(t, err, "needs lock keys")
	_, err = workloads.NewRunner("counter", workloads.Config{Shape: workloads.Shape{Clients: 1, Keys: []string{"k"}}, Rec: rec})
	require.ErrorContains(t, err, "TTL")
	_, err = workloads.NewRunner("orders", workloads.Config{Shape: workloads.Shape{Clients: 1, TTL: workloads.Duration(time.Second), HoldMin: workloads.Duration(2), HoldMax: workloads.Duration(1)}, Rec: rec})
	require.ErrorContains(t, err, "hold times")
}

func TestEveryWorkloadNamesItsCheckers(t *testing.T) {
	for _, name := range workloads.Names() {
		k, err := workloads.Get(name)
		require.NoError(t, err)
		require.NotEmpty(t, k.Summary)
		require.Contains(t, k.Judges(), "double-holds", "%s: every workload judges the lock service", name)
	}
	b, err := json.Marshal(workloads.Names())
	require.NoError(t, err)
	// first-key is register_test.go's, added from outside the package.
	require.JSONEq(t, `["counter","fenced","first-key","heartbeat","keepalive","mutex","orders"]`, string(b))
}

// Each client slot reaches the lock service through its own links: with
// client 0's link to the master cut, client 0 never gets the lock while the
// others keep taking it.
func TestEachClientDialsThroughItsOwnLinks(t *testing.T) {
	c := nemesistest.StartWith(t, nemesistest.Options{Topology: cluster.Independent, Masters: 1, LinkFaults: true})
	l, err := c.Link(0, "redis-1")
	require.NoError(t, err)
	require.NoError(t, l.Cut())
	cfg := config(c, "simple", nil)
	cfg.SlotEndpoints = c.EndpointsFor
	var cut int
	// Ten grants to the others give client 0 every chance to take one.
	ops := run(t, "mutex", cfg, grants(10, nil), func(r *workloads.Runner) {
		require.Eventually(t, func() bool {
			id, _, err := r.Client(0)
			cut = id
			return err == nil
		}, 10*time.Second, 10*time.Millisecond)
	})
	holders := map[int]bool{}
	for _, op := range ops {
		if op.F == history.Acquire && op.Type == history.OK {
			holders[op.Process] = true
		}
	}
	require.NotEmpty(t, holders, "the clients with working links took the lock")
	require.False(t, holders[cut], "client 0 took the lock through a cut link")
}
