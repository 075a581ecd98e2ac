package checker

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/deadbolt-lab/deadbolt/history"
)

// spill keeps a streamed history's lock operations on disk, one bucket
// file per group of keys, so that reading a history holds only the
// operations still open: each completed operation is written out, and
// the buckets are later read back as streams (keyed.go), a key read again
// whole only when its windows cannot settle it.
type spill struct {
	buckets []*spillBucket
	// keys are the keys in the order first seen; a key's bucket is its
	// place in that order modulo the bucket count, so buckets hold
	// about as many keys each.
	keys []string
	// count is how many records each key has, so that load makes each
	// key's slice once at its size.
	count []int
	// open is how many of each key's operations are open; an operation
	// whose completion leaves none is marked as a place to cut (window.go).
	open []int32
	buf  []byte
	err  error
}

type spillBucket struct {
	f *os.File
	w *bufio.Writer
	n int // records written
}

// spillBuckets bounds the open files and their write buffers (64 KiB
// each); with more keys than buckets a bucket holds several keys.
const spillBuckets = 64

func newSpill() *spill { return &spill{} }

// close releases the spill's files (already unlinked: see put).
func (s *spill) close() {
	for _, b := range s.buckets {
		if b != nil {
			b.f.Close()
		}
	}
}

// fCodes and typeCodes number the values a lockOp's f and outcome take.
var (
	fCodes    = []history.F{history.Acquire, history.Release, history.Renew, history.Lost}
	typeCodes = []history.Type{history.Invoke, history.OK, history.Fail, history.Info}
)

// opened counts an operation invoked on l's key, numbered by the reading
// (lockOp.keyID) in the order first seen, as the spill numbers its keys.
func (s *spill) opened(l *lockOp) {
	if int(l.keyID) == len(s.keys) {
		s.keys = append(s.keys, l.key)
		s.count = append(s.count, 0)
		s.open = append(s.open, 0)
	}
	s.open[l.keyID]++
}

// put writes l out, once it completed or the history ended; the first
// error sticks and is returned by flush.
func (s *spill) put(l *lockOp) {
	if s.err != nil {
		return
	}
	id := l.keyID
	s.count[id]++
	s.open[id]--
	flags := b2byte(l.refused) | viaFlags(l.via)
	if s.open[id] == 0 && l.completed() {
		flags |= cutFlag
	}
	bi := int(id) % spillBuckets
	for len(s.buckets) <= bi {
		s.buckets = append(s.buckets, nil)
	}
	b := s.buckets[bi]
	if b == nil {
		// Unlinked at once: a check stopped by a signal or a crash leaves
		// nothing behind, and the open file lives until close.
		f, err := os.CreateTemp("", "deadbolt-check-*")
		if err == nil {
			err = os.Remove(f.Name())
		}
		if err != nil {
			s.err = err
			return
		}
		b = &spillBucket{f: f, w: bufio.NewWriterSize(f, 64<<10)}
		s.buckets[bi] = b
	}
	e := s.buf[:0]
	e = binary.AppendUvarint(e, uint64(id))
	e = append(e, byte(slices.Index(fCodes, l.f)), byte(slices.Index(typeCodes, l.outcome)), flags)
	for _, v := range []int64{l.call, l.done, l.ttl, l.fence, l.queued, int64(l.invIndex), int64(l.doneIndex), int64(l.process), int64(l.client), l.began, l.ttlSaid} {
		e = binary.AppendVarint(e, v)
	}
	for _, str := range []string{l.lease, l.owner} {
		e = binary.AppendUvarint(e, uint64(len(str)))
		e = append(e, str...)
	}
	s.buf = e
	b.n++
	if _, err := b.w.Write(e); err != nil {
		s.err = err
	}
}

// cutFlag marks a record whose completion left its key with no operation
// open; bit 0 of the flags is the operation's refused, and viaFlags its
// renewal's call.
const cutFlag = 2

const extendFlag, reacquireFlag = 4, 8

// viaFlags are the flags of a renewal's call.
func viaFlags(via string) byte {
	switch via {
	case history.ViaExtend:
		return extendFlag
	case history.ViaReacquire:
		return reacquireFlag
	}
	return 0
}

// viaOf reads a renewal's call back from its flags (a switch, not a map:
// every record read back asks).
func viaOf(flags byte) string {
	switch {
	case flags&extendFlag != 0:
		return history.ViaExtend
	case flags&reacquireFlag != 0:
		return history.ViaReacquire
	}
	return ""
}

func b2byte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// flush ends the writing.
func (s *spill) flush() error {
	for _, b := range s.buckets {
		if b != nil && s.err == nil {
			s.err = b.w.Flush()
		}
	}
	return s.err
}

// bucketCount is how many buckets were written.
func (s *spill) bucketCount() int { return len(s.buckets) }

// reader reads bucket i back from its start, a record at a time.
func (s *spill) reader(i int) *spillReader {
	r := &spillReader{keys: s.keys}
	if b := s.buckets[i]; b != nil {
		r.left = b.n
		r.br = bufio.NewReaderSize(io.NewSectionReader(b.f, 0, math.MaxInt64), 64<<10)
	}
	return r
}

// loadKeys reads back the lock operations of the keys of bucket i that
// want picks, each key's in invocation order as Input.locks holds them.
func (s *spill) loadKeys(i int, want func(id uint32) bool) (map[string][]lockOp, error) {
	out := map[string][]lockOp{}
	r := s.reader(i)
	for {
		l, id, _, ok := r.next()
		if !ok {
			break
		}
		if !want(id) {
			continue
		}
		if out[l.key] == nil {
			out[l.key] = make([]lockOp, 0, s.count[id])
		}
		out[l.key] = append(out[l.key], l)
	}
	if r.err != nil {
		return nil, r.err
	}
	for _, ls := range out {
		slices.SortFunc(ls, func(a, b lockOp) int { return cmp.Compare(a.invIndex, b.invIndex) })
	}
	return out, nil
}

var errSpillCorrupt = errors.New("corrupt record")

// spillReader decodes a bucket's records in the order written
// (completion order), each field from the reader's buffer (Peek), not a
// byte at a time; the first error sticks.
type spillReader struct {
	br   *bufio.Reader
	keys []string
	left int    // records still to read
	long []byte // a string longer than the buffer, read whole
	err  error
}

// next is the next record: the operation, its key's number, and whether
// its completion left the key with no operation open; false at the end
// or on an error.
func (r *spillReader) next() (l lockOp, id uint32, cut bool, ok bool) {
	if r.left == 0 || r.err != nil {
		return l, 0, false, false
	}
	r.left--
	id64 := r.uvarint()
	var head [3]byte // copied: the buffer moves on as the record is read
	if b := r.bytes(3); b != nil {
		copy(head[:], b)
	}
	if r.err != nil || id64 >= uint64(len(r.keys)) || int(head[0]) >= len(fCodes) || int(head[1]) >= len(typeCodes) {
		r.err = fmt.Errorf("reading back the spilled history: %w", cmp.Or(r.err, errSpillCorrupt))
		return l, 0, false, false
	}
	id = uint32(id64)
	l.key, l.keyID = r.keys[id], id
	l.f, l.outcome, l.refused, l.via = fCodes[head[0]], typeCodes[head[1]], head[2]&1 == 1, viaOf(head[2])
	l.call, l.done, l.ttl, l.fence, l.queued = r.varint(), r.varint(), r.varint(), r.varint(), r.varint()
	l.invIndex, l.doneIndex, l.process, l.client, l.began = int32(r.varint()), int32(r.varint()), int32(r.varint()), int32(r.varint()), r.varint()
	l.ttlSaid = r.varint()
	l.lease, l.owner = r.str(), r.str()
	if r.err != nil {
		r.err = fmt.Errorf("reading back the spilled history: %w", r.err)
		return l, 0, false, false
	}
	return l, id, head[2]&cutFlag != 0, true
}

// bytes are the next n bytes, if the bucket has them; valid until the
// next read.
func (r *spillReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > r.br.Size() {
		r.long = slices.Grow(r.long[:0], n)[:n]
		if _, r.err = io.ReadFull(r.br, r.long); r.err != nil {
			return nil
		}
		return r.long
	}
	b, err := r.br.Peek(n)
	if len(b) < n {
		r.err = cmp.Or(err, io.ErrUnexpectedEOF)
		if r.err == io.EOF {
			r.err = io.ErrUnexpectedEOF
		}
		return nil
	}
	r.br.Discard(n)
	return b
}

func (r *spillReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	b, err := r.br.Peek(binary.MaxVarintLen64) // fewer at the bucket's end
	x, n := binary.Uvarint(b)
	switch {
	case n == 0 && err != nil && err != io.EOF:
		r.err = err
		return 0
	case n == 0:
		r.err = io.ErrUnexpectedEOF
		return 0
	case n < 0:
		r.err = errSpillCorrupt
		return 0
	}
	r.br.Discard(n)
	return x
}

func (r *spillReader) varint() int64 {
	ux := r.uvarint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

// str reads a string, a copy: a window keeps few of a bucket's.
func (r *spillReader) str() string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n > 1<<20 {
		r.err = errSpillCorrupt
		return ""
	}
	return string(r.bytes(int(n)))
}
