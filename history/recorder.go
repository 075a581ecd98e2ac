package history

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// Recorder appends operations to a history, streaming each one to w as a
// JSON line the moment it happens, so a crashed run still leaves its record.
type Recorder struct {
	start time.Time
	mu    sync.Mutex
	enc   *json.Encoder
	ops   []Op
	err   error
}

// NewRecorder starts the run's clock now. w may be nil to keep ops in memory only.
func NewRecorder(w io.Writer) *Recorder {
	r := &Recorder{start: time.Now()}
	if w != nil {
		r.enc = json.NewEncoder(w)
	}
	return r
}

// Now is the current time on the history's clock.
func (r *Recorder) Now() int64 { return r.At(time.Now()) }

// At converts a time taken with time.Now (monotonic) to the history's clock.
func (r *Recorder) At(t time.Time) int64 { return int64(t.Sub(r.start)) }

// Record stamps op with the next index and the current time, and writes it.
func (r *Recorder) Record(op Op) Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	op.Index = len(r.ops)
	op.Time = r.Now()
	r.ops = append(r.ops, op)
	if r.enc != nil && r.err == nil {
		if err := r.enc.Encode(op); err != nil {
			r.err = fmt.Errorf("write history: %w", err)
		}
	}
	return op
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
