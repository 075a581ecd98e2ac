package history

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sync"
	"time"
)

// Recorder appends operations to a history, streaming each one to w as a
// JSON line the moment it happens, so a crashed run still leaves its record.
type Recorder struct {
	start time.Time
	// mono0 is CLOCK_MONOTONIC at start, to place client-stamped events.
	mono0 int64

	mu       sync.Mutex
	enc      *json.Encoder
	ops      []Op
	err      error
	watchers map[int]watcher
	nextW    int
}

type watcher struct {
	match func(Op) bool
	ch    chan Op
}

// NewRecorder starts the run's clock now. w may be nil to keep ops in memory only.
func NewRecorder(w io.Writer) *Recorder {
	r := &Recorder{start: time.Now(), watchers: map[int]watcher{}}
	r.mono0 = monoOffset(r.start)
	if w != nil {
		r.enc = json.NewEncoder(w)
	}
	return r
}

// offsetReads is how many bracketed reads monoOffset takes.
const offsetReads = 16

// monoOffset is CLOCK_MONOTONIC at start. Each read of it is bracketed by
// two of the history's clock and errs by half the bracket at most, not by
// a whole read; a thread descheduled inside a bracket (the read is a
// system call, and a loaded machine preempts there) stretches it to
// milliseconds, which would misplace every client-stamped event of the
// run by half that. The narrowest of several brackets is kept.
func monoOffset(start time.Time) int64 {
	var offset int64
	narrowest := time.Duration(math.MaxInt64)
	for range offsetReads {
		before := time.Since(start)
		mono := MonoNow()
		after := time.Since(start)
		if after-before < narrowest {
			narrowest, offset = after-before, mono-int64(before+after)/2
		}
	}
	return offset
}

// Now is the current time on the history's clock.
func (r *Recorder) Now() int64 { return r.At(time.Now()) }

// At converts a time taken with time.Now (monotonic) to the history's clock.
func (r *Recorder) At(t time.Time) int64 { return int64(t.Sub(r.start)) }

// FromMono converts a CLOCK_MONOTONIC reading, taken by any process on this
// host, to the history's clock.
func (r *Recorder) FromMono(mono int64) int64 { return mono - r.mono0 }

// Record stamps op with the next index and the current time, and writes it.
func (r *Recorder) Record(op Op) Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	op.Time, op.Stamp = r.Now(), ""
	return r.appendLocked(op)
}

// RecordStamped records an event that a client stamped itself at t (on the
// history's clock, see FromMono). Its index is the next one; its time may
// be earlier than that of operations recorded before it.
func (r *Recorder) RecordStamped(op Op, t int64) Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	op.Time, op.Stamp = max(t, 0), StampClient
	return r.appendLocked(op)
}

// Mark records the start of a phase of the run: an invoke and an ok at
// one instant, on the nemesis's process.
func (r *Recorder) Mark(p Phase) {
	r.Instant(Op{Process: NemesisProcess, F: PhaseF, Phase: p})
}

// Instant records op as an invoke and an ok at one instant, now: a mark,
// or something the harness saw happen (a Sentinel's failover).
func (r *Recorder) Instant(op Op) {
	r.mu.Lock()
	defer r.mu.Unlock()
	op.Type, op.Time = Invoke, r.Now()
	r.appendLocked(op)
	op.Type = OK
	r.appendLocked(op)
}

func (r *Recorder) appendLocked(op Op) Op {
	op.Index = len(r.ops)
	if (op.F == FaultStart || op.F == FaultMissed) && op.Type == Invoke && op.FaultID == "" {
		// A new fault instance is named by its first operation's index.
		op.FaultID = fmt.Sprintf("f%d", op.Index)
	}
	r.ops = append(r.ops, op)
	if r.enc != nil && r.err == nil {
		if err := r.enc.Encode(op); err != nil {
			r.err = fmt.Errorf("write history: %w", err)
		}
	}
	for id, w := range r.watchers {
		if w.match(op) {
			w.ch <- op
			delete(r.watchers, id)
		}
	}
	return op
}

// Watch delivers the first operation recorded from now on that match
// accepts, once. match runs under the recorder's lock and must be quick.
// Call cancel when no longer waiting.
func (r *Recorder) Watch(match func(Op) bool) (first <-chan Op, cancel func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.nextW
	r.nextW++
	ch := make(chan Op, 1)
	r.watchers[id] = watcher{match: match, ch: ch}
	return ch, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.watchers, id)
	}
}

// Ops returns a copy of everything recorded so far.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Op(nil), r.ops...)
}

// Err is the first write error, if any: a history that could not be
// written completely must not be checked as if it were.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
