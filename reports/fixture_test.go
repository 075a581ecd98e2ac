package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/history"
)

// ms is a history time in milliseconds.
func ms(n int64) int64 { return n * int64(time.Millisecond) }

// hist writes hand-made histories: each call appends an invocation and its
// completion; ops() orders them by time and numbers them.
type hist struct{ ops []history.Op }

func (h *hist) op(op history.Op) *hist { h.ops = append(h.ops, op); return h }

// acquire is an ok acquire of key by process p as lease, from call to done.
func (h *hist) acquire(p int, key, lease string, call, done int64) *hist {
	inv := history.Op{Time: ms(call), Type: history.Invoke, Process: p, F: history.Acquire, Key: key, Lease: lease, TTL: ms(5000)}
	ok := inv
	ok.Time, ok.Type, ok.Owner = ms(done), history.OK, "tok-"+lease
	return h.op(inv).op(ok)
}

func (h *hist) release(p int, key, lease string, call, done int64) *hist {
	inv := history.Op{Time: ms(call), Type: history.Invoke, Process: p, F: history.Release, Key: key, Lease: lease, Owner: "tok-" + lease}
	ok := inv
	ok.Time, ok.Type = ms(done), history.OK
	return h.op(inv).op(ok)
}

// fault is a fault window on node from start to end (both steps ok).
func (h *hist) fault(name, node string, start, end int64) *hist {
	id := "f" + name + node
	for _, st := range []struct {
		f history.F
		t int64
	}{{history.FaultStart, start}, {history.FaultEnd, end}} {
		inv := history.Op{Time: ms(st.t), Type: history.Invoke, Process: history.NemesisProcess, F: st.f, Fault: name, FaultID: id, Node: node}
		ok := inv
		ok.Type = history.OK
		h.op(inv).op(ok)
	}
	return h
}

func (h *hist) sorted() []history.Op {
	ops := append([]history.Op(nil), h.ops...)
	// A stable sort keeps an invocation before its completion at one time.
	for i := 1; i < len(ops); i++ {
		for j := i; j > 0 && ops[j-1].Time > ops[j].Time; j-- {
			ops[j-1], ops[j] = ops[j], ops[j-1]
		}
	}
	for i := range ops {
		ops[i].Index = i
	}
	return ops
}

// runDir writes a run directory for ops as a run would: history.jsonl,
// results.json, report.md, linearizability.html and report.html, under
// root/<scenario>/<name>. It returns the directory and the results.
func runDir(t *testing.T, root, scenario, name string, ops []history.Op, expect string) (string, *Results) {
	t.Helper()
	dir := filepath.Join(root, scenario, name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	f, err := os.Create(filepath.Join(dir, HistoryFile))
	require.NoError(t, err)
	enc := json.NewEncoder(f)
	for _, op := range ops {
		require.NoError(t, enc.Encode(op))
	}
	require.NoError(t, f.Close())
	rep := checker.Check(ops, checker.Options{Checkers: []string{"double-holds", "lease-lock", "liveness"}})
	r := &Results{Scenario: scenario, Description: "a hand-made history", Seed: 7, Lock: "simple", Topology: "sentinel",
		Workload: "mutex", Nemesis: "isolate-primary", Expected: expect, Clients: 3, Ops: len(ops), Health: "ok", Dir: dir}
	matches := (expect == "unsafe") == (rep.Verdict == checker.Invalid)
	r.SetCheck(rep, matches)
	require.NoError(t, WriteRun(dir, r, rep))
	return dir, r
}

// doubleHold: processes 0 and 1 both hold k from 1.2s to 1.5s during an
// isolation of redis-1, and process 2 is paused from 0.5s to 2s.
func doubleHold() []history.Op {
	h := &hist{}
	h.fault("isolate-primary", "redis-1", 1000, 3000).
		fault("pause-client", "process 2", 500, 2000).
		acquire(0, "k", "p0.1", 100, 110).release(0, "k", "p0.1", 1500, 1510).
		acquire(1, "k", "p1.1", 1190, 1200).release(1, "k", "p1.1", 1800, 1810).
		acquire(2, "j", "p2.1", 200, 210).release(2, "j", "p2.1", 2100, 2110)
	return h.sorted()
}

// legalLookAlike is doubleHold with process 1 acquiring after process 0
// released: the same lanes, faults and pause, no overlap.
func legalLookAlike() []history.Op {
	h := &hist{}
	h.fault("isolate-primary", "redis-1", 1000, 3000).
		fault("pause-client", "process 2", 500, 2000).
		acquire(0, "k", "p0.1", 100, 110).release(0, "k", "p0.1", 1500, 1510).
		acquire(1, "k", "p1.1", 1520, 1530).release(1, "k", "p1.1", 1800, 1810).
		acquire(2, "j", "p2.1", 200, 210).release(2, "j", "p2.1", 2100, 2110)
	return h.sorted()
}

func anomaly(kind string, at int64, leases ...string) checker.Anomaly {
	return checker.Anomaly{Kind: kind, At: at, Key: "k", Leases: leases, Text: kind + " planted by the test"}
}
