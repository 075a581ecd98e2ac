package history

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Scan reads a JSON-lines history one operation at a time, validating each
// as Parse does (fields, index sequence, harness time order, pairing), and
// calls fn with it and its operation number (see Pairer.Add); op is
// valid only during the call. Errors name
// the line. A last line that lacks its newline and is not a whole
// operation is not an error: Scan stops there and says so in the Tail.
//
// Decoding, the bulk of the work, runs on every CPU: lines go out in
// batches to decoders and come back in order to the caller's goroutine,
// where they are checked against each other and handed to fn.
func Scan(r io.Reader, fn func(op *Op, n int) error) (Tail, error) {
	workers := max(runtime.GOMAXPROCS(0), 1)
	s := &scan{work: make(chan *batch, workers), ordered: make(chan *batch, 2*workers), stop: make(chan struct{})}
	s.free.New = func() any { return &batch{} }
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var fast fastDecoder
			for b := range s.work {
				b.decode(&fast)
				close(b.done)
			}
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		readErr <- s.read(r)
		close(s.work)
		close(s.ordered)
	}()
	tail, count, err := s.consume(fn)
	close(s.stop) // the reader stops at its next batch; drain what it sent
	for b := range s.ordered {
		<-b.done
	}
	wg.Wait()
	switch rerr := <-readErr; {
	case err != nil:
		return tail, err
	case rerr != nil:
		return tail, rerr
	case count == 0 && tail.Cut():
		return tail, fmt.Errorf("empty history: %s", tail)
	case count == 0:
		return tail, fmt.Errorf("empty history")
	}
	return tail, nil
}

// batchBytes is about how much of the history goes to a decoder at
// once: enough to make the hand-off cheap, little enough that the batches
// in flight stay small.
const batchBytes = 64 << 10

// maxLine bounds a line: a longer one is not an operation.
const maxLine = 16 << 20

type scan struct {
	work, ordered chan *batch
	stop          chan struct{}
	free          sync.Pool
}

// batch is consecutive lines of the history and, once done is closed,
// their operations or decoding errors.
type batch struct {
	firstLine int
	data      []byte  // whole lines, each with its newline but a cut last one
	lines     int     // how many
	ends      []int   // the end of each line in data, found by the decoder
	ops       []Op    // decoded, one per line
	errs      []error // the decoding or validation error of each line
	blank     []bool  // empty lines, skipped
	cut       bool    // the last line of the history lacks its newline
	done      chan struct{}
}

func (b *batch) line(i int) []byte {
	start := 0
	if i > 0 {
		start = b.ends[i-1]
	}
	return b.data[start:b.ends[i]]
}

func (b *batch) decode(fast *fastDecoder) {
	b.ends = b.ends[:0]
	for at := 0; at < len(b.data); {
		end := bytes.IndexByte(b.data[at:], '\n') + 1
		if end == 0 {
			end = len(b.data) - at // the cut last line
		}
		at += end
		b.ends = append(b.ends, at)
	}
	n := len(b.ends)
	b.ops, b.errs, b.blank = grow(b.ops, n), grow(b.errs, n), grow(b.blank, n)
	for i := range n {
		b.errs[i], b.blank[i] = nil, false // the decoders zero the op
		l := bytes.TrimSpace(b.line(i))
		if len(l) == 0 {
			b.ops[i], b.blank[i] = Op{}, true
			continue
		}
		if fast.decode(l, &b.ops[i]) {
			b.errs[i] = b.ops[i].Validate()
			continue
		}
		b.ops[i] = Op{}
		if err := json.Unmarshal(l, &b.ops[i], decodeOptions); err != nil {
			b.errs[i] = errNotOp{err: err, cut: b.cut && i == n-1 && !jsontext.Value(l).IsValid()}
			continue
		}
		b.errs[i] = b.ops[i].Validate()
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// errNotOp is a line that is not an operation; cut when it is the last
// line, without its newline, and not even whole JSON: a crash cut it.
type errNotOp struct {
	err error
	cut bool
}

func (e errNotOp) Error() string { return "not a history operation: " + e.err.Error() }

// read splits r into batches of whole lines, in order, until r ends or
// the consumer stops. Each batch is read straight into its own buffer;
// the part line it ends with is carried to the next.
func (s *scan) read(r io.Reader) error {
	line := 0 // lines sent
	var carry []byte
	send := func(b *batch) bool {
		select {
		case <-s.stop:
			return false
		default:
		}
		select {
		case s.ordered <- b:
		case <-s.stop:
			return false
		}
		s.work <- b
		return true
	}
	for eof := false; !eof; {
		b := s.free.Get().(*batch)
		b.firstLine, b.cut, b.done = line+1, false, make(chan struct{})
		b.data = append(b.data[:0], carry...)
		whole := 0 // the complete lines end here
		for whole == 0 && !eof {
			if cap(b.data)-len(b.data) < batchBytes/2 {
				b.data = slices.Grow(b.data, batchBytes)
			}
			n, err := r.Read(b.data[len(b.data):cap(b.data)])
			from := len(b.data)
			b.data = b.data[:from+n]
			switch {
			case err == io.EOF:
				eof = true
			case err != nil:
				return fmt.Errorf("line %d: %w", line+bytes.Count(b.data[:from], []byte{'\n'})+1, err)
			}
			// Only the batch's first line can have grown past a block.
			if i := bytes.IndexByte(b.data[from:], '\n'); i >= 0 && from+i <= maxLine {
				whole = from + bytes.LastIndexByte(b.data[from:], '\n') + 1
			} else if len(b.data) > maxLine {
				return fmt.Errorf("line %d: longer than 16MB: not a history operation", line+1)
			}
		}
		if eof && len(b.data)-whole > maxLine {
			return fmt.Errorf("line %d: longer than 16MB: not a history operation", line+bytes.Count(b.data[:whole], []byte{'\n'})+1)
		}
		if eof && whole < len(b.data) {
			whole = len(b.data) // a last line without its newline
			b.cut = true
		}
		carry = append(carry[:0], b.data[whole:]...)
		b.data = b.data[:whole]
		b.lines = bytes.Count(b.data, []byte{'\n'})
		if b.cut {
			b.lines++
		}
		line += b.lines
		if b.lines == 0 {
			s.free.Put(b)
			continue
		}
		if !send(b) {
			return nil
		}
	}
	return nil
}

// consume checks the decoded operations in order and hands them to fn,
// returning how many it handed.
func (s *scan) consume(fn func(op *Op, n int) error) (tail Tail, count int, err error) {
	var (
		p           Pairer
		lastHarness int64
	)
	for b := range s.ordered {
		<-b.done
		for i := range b.ends {
			line := b.firstLine + i
			if b.blank[i] {
				continue
			}
			if err := b.errs[i]; err != nil {
				if e, ok := err.(errNotOp); ok && e.cut {
					tail = Tail{CutLine: line, CutBytes: len(b.line(i))}
					break
				}
				return tail, count, fmt.Errorf("line %d: %v", line, err)
			}
			op := &b.ops[i]
			if op.Index != count {
				return tail, count, fmt.Errorf("line %d: index %d, want %d", line, op.Index, count)
			}
			// Harness-stamped times never go backwards; client-stamped
			// events are recorded when their report arrives, a little late.
			if op.Stamp == "" {
				if op.Time < lastHarness {
					return tail, count, fmt.Errorf("line %d: time goes backwards", line)
				}
				lastHarness = op.Time
			}
			n, err := p.Add(op)
			if err != nil {
				return tail, count, fmt.Errorf("line %d: %v", line, err)
			}
			if err := fn(op, n); err != nil {
				return tail, count, err
			}
			count++
		}
		s.free.Put(b)
	}
	return tail, count, nil
}
