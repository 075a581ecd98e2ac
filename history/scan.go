package history

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
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

// batchLines is how many lines go to a decoder at once: enough to make
// the hand-off cheap, few enough that the batches in flight stay small.
const batchLines = 512

type scan struct {
	work, ordered chan *batch
	stop          chan struct{}
	free          sync.Pool
}

// batch is consecutive lines of the history and, once done is closed,
// their operations or decoding errors.
type batch struct {
	firstLine int
	data      []byte  // the lines, copied out of the reader's buffer
	ends      []int   // the end of each line in data
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
	n := len(b.ends)
	b.ops, b.errs, b.blank = grow(b.ops, n), grow(b.errs, n), grow(b.blank, n)
	for i := range n {
		b.ops[i], b.errs[i], b.blank[i] = Op{}, nil, false
		l := bytes.TrimSpace(b.line(i))
		if len(l) == 0 {
			b.blank[i] = true
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

// read splits r into batches of lines, in order, until r ends or the
// consumer stops.
func (s *scan) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 256*1024), 16*1024*1024)
	unterminated := false
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			unterminated = true
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	line := 0
	next := func() *batch {
		b := s.free.Get().(*batch)
		b.firstLine, b.data, b.ends, b.cut, b.done = line+1, b.data[:0], b.ends[:0], false, make(chan struct{})
		return b
	}
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
	b := next()
	for sc.Scan() {
		line++
		b.data = append(b.data, sc.Bytes()...)
		b.ends = append(b.ends, len(b.data))
		if len(b.ends) == batchLines {
			if !send(b) {
				return nil
			}
			b = next()
		}
	}
	b.cut = unterminated
	if len(b.ends) > 0 && !send(b) {
		return nil
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("line %d: longer than 16MB: not a history operation", line+1)
		}
		return fmt.Errorf("line %d: %w", line+1, err)
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
