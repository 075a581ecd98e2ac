package reports

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/history"
)

// HistoryFile is the name of a run's history in its directory.
const HistoryFile = "history.jsonl"

// runData is what report.html draws, read back from a run directory: the
// results, and the checker's own analysis of the history (holding windows,
// fault windows, paired operations). The page shows the holds the checker
// computed, never the lock's claims.
type runData struct {
	Results *Results
	Ops     []history.Op
	Pairs   []history.Operation
	In      *checker.Input
	// Tail says the history's last line was cut by a crash; what came
	// before it is drawn.
	Tail history.Tail
	// Lanes are the client processes, one timeline lane each, in order.
	Lanes []int
	// LeaseProcess maps a lease to the process that acquired it.
	LeaseProcess map[string]int
}

// loadRun reads dir's history for r. A missing or malformed history is an
// error: the page would have nothing to draw.
func loadRun(dir string, r *Results) (*runData, error) {
	path := filepath.Join(dir, HistoryFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ops []history.Op
	tail, err := history.Scan(f, func(op *history.Op, _ int) error {
		ops = append(ops, *op)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The holds drawn are the ones the checkers judged.
	in, err := checker.NewInputOf(ops, r.Reentrant)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d := &runData{Results: r, Ops: ops, Pairs: in.Pairs, In: in, Tail: tail, LeaseProcess: map[string]int{}}
	lanes := map[int]bool{}
	for _, op := range ops {
		// Renewals and loss notices run on processes of their own; a lane
		// is a lock user.
		if op.Process < 0 || !(op.F == history.Acquire || op.F == history.Release || op.F.IsResource()) {
			continue
		}
		lanes[op.Process] = true
		if op.F == history.Acquire && op.Lease != "" {
			d.LeaseProcess[op.Lease] = op.Process
		}
	}
	for p := range lanes {
		d.Lanes = append(d.Lanes, p)
	}
	slices.Sort(d.Lanes)
	return d, nil
}

// clientFault matches the node of a fault on a client process ("process 3",
// "process 3 at after-setnx"): drawn on that process's lane, not across all.
var clientFault = regexp.MustCompile(`^process (\d+)\b`)

// faultProcess is the process a fault window targets, or -1 for a fault on
// nodes or links, which touches every client.
func faultProcess(w checker.FaultWindow) int {
	m := clientFault.FindStringSubmatch(w.Node)
	if m == nil {
		return -1
	}
	p, err := strconv.Atoi(m[1])
	if err != nil {
		return -1
	}
	return p
}
