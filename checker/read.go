package checker

import (
	"fmt"
	"io"
	"os"

	"github.com/deadbolt-lab/deadbolt/history"
)

// isStreamable reports whether the named checker reads only the lock
// view of a history (Input's holds, lock operations and faults), so that
// CheckReader can check a history without holding it: a million
// operations as history.Ops and their pairs take more than half a
// gigabyte. A checker says so by being Parted.
func isStreamable(name string) bool {
	_, parted := partedOf(name, Options{})
	return parted
}

// MemoryLimit is the soft memory limit (runtime/debug.SetMemoryLimit) that
// suits checking a history file of size bytes: what the check keeps is
// about the file's size, and the garbage collector's default of letting
// the heap reach twice what is kept makes the process half again larger
// than it needs to be. At least 200MiB, so that small histories never make
// the collector run hard.
func MemoryLimit(size int64) int64 { return max(200<<20, size*3/2) }

// Streamed, keyed checks (CheckFile's usual path) keep little live: the
// reading holds the open operations, and the check one key per CPU. For
// them the collector may let the heap grow to two and a half times what
// is live (GOGC 150: at 200 the 10M-line history's check took 106 MB
// instead of 78 MB for 1% less CPU; docs/results/2026-11-27-judge-cost.md)
// up to a soft limit of keyedMemoryLimit, which bounds the process
// whatever the history's length, as long as a key's share of it fits.
const (
	keyedGCPercent   = 150
	keyedMemoryLimit = 320 << 20
)

// MemorySettings are the soft memory limit and GOGC percentage that suit
// checking a history file of size bytes with opts: MemoryLimit and the
// default percentage when the history must be held whole, the keyed
// check's own otherwise.
func MemorySettings(size int64, opts Options) (limit int64, gcPercent int) {
	names, err := opts.checkers()
	if err != nil || needPairs(names) || opts.Whole {
		return MemoryLimit(size), 100
	}
	return keyedMemoryLimit, keyedGCPercent
}

// needPairs reports whether a checker among names reads Input.Pairs.
func needPairs(names []string) bool {
	for _, n := range names {
		if !isStreamable(n) {
			return true
		}
	}
	return false
}

// CheckFile checks the history.jsonl at path, as CheckReader does.
func CheckFile(path string, opts Options) (Report, error) {
	// Opening a FIFO would wait for a writer: a history is a regular file.
	if st, err := os.Stat(path); err != nil {
		return Report{}, err
	} else if !st.Mode().IsRegular() {
		return Report{}, fmt.Errorf("%s is not a regular file (%s): a history is a file of JSON lines", path, st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return Report{}, err
	}
	defer f.Close()
	hint := 0
	if st, err := f.Stat(); err == nil {
		hint = int(min(st.Size()/lineBytes, 1<<26))
	}
	r, err := checkReader(f, opts, hint)
	if err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// CheckReader reads a JSON-lines history and checks it as Check does.
// When every chosen checker is streamable, operations are folded into the
// lock view as they are read and never kept whole. The error is bad input:
// an unknown checker, or a history that cannot be read (it names the
// line). A last line cut short by a crash is not an error: every complete
// line is checked, and Report.Tail and the reason say where the history
// was cut.
func CheckReader(r io.Reader, opts Options) (Report, error) {
	return checkReader(r, opts, 0)
}

// lineBytes is a little less than the length of two history lines (a
// lock operation's invocation and completion), for guessing how many lock
// operations a file holds: a guess too high wastes a little, one too low
// grows the slice once.
const lineBytes = 2 * 120

func checkReader(r io.Reader, opts Options, lockHint int) (Report, error) {
	names, err := opts.checkers()
	if err != nil {
		return Report{}, err
	}
	keepPairs := needPairs(names)
	var sp *spill
	if !keepPairs && !opts.Whole {
		sp = newSpill()
		defer sp.close()
		lockHint = 0
	}
	b := newInputBuilder(keepPairs, lockHint)
	b.in.Reentrant, b.spill = opts.Reentrant, sp
	var ops []history.Op
	read := 0
	tail, err := history.Scan(r, func(op *history.Op, n int) error {
		read++
		if keepPairs {
			ops = append(ops, *op)
		}
		return b.add(op, n, nil)
	})
	if err != nil {
		return Report{}, err
	}
	var rep Report
	if b.spill != nil {
		if rep, err = checkKeys(b, b.spill, names, opts); err != nil {
			return Report{}, err
		}
	} else {
		in := b.finish()
		in.Ops = ops
		rep = runCheckers(in, names, opts)
	}
	if tail.Cut() {
		rep.Tail = &tail
		rep.Reason = fmt.Sprintf("The history was cut: %s; the %s before it were checked. %s", tail, Plural(read, "operation"), rep.Reason)
	}
	return rep, nil
}
