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
	"strconv"

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
	size [binary.MaxVarintLen64]byte
	err  error
}

type spillBucket struct {
	f    *os.File
	w    *bufio.Writer
	n    int // records written
	last spillDeltas
}

// spillDeltas are the previous record's invocation time and index in a
// bucket: each record's are written as the difference from them, which
// takes two or three bytes where the numbers take five or six.
type spillDeltas struct {
	call     int64
	invIndex int32
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
	s.buf = appendSpilled(s.buf[:0], l, flags, &b.last)
	b.n++
	// The length goes through a buffer of the spill's: one on the stack
	// escaped to the heap (bufio may hand it to the file), once a record.
	if _, err := b.w.Write(binary.AppendUvarint(s.size[:0], uint64(len(s.buf)))); err != nil {
		s.err = err
	} else if _, err := b.w.Write(s.buf); err != nil {
		s.err = err
	}
}

// A record is its length, then: the key's number; f and outcome in one
// byte (two bits each); the flags; the times and numbers as varints, the
// invocation's as differences from the bucket's record before (last),
// the completion's from the invocation's, and those that most records
// have the same as another field (ttlSaid, client) only when not; then
// the lease (as its M alone when it is its process's pN.M) and the owner.
// Lengths and differences shrink a record of the 10M-line history from
// 69 bytes to about 45, which the write and the read-back both pay by.
func appendSpilled(e []byte, l *lockOp, flags byte, last *spillDeltas) []byte {
	e = binary.AppendUvarint(e, uint64(l.keyID))
	m, named := processSeq(l)
	if named {
		flags |= namedFlag
	}
	if !l.completed() {
		flags |= pendingFlag
	}
	if l.ttlSaid == l.ttl {
		flags |= sameTTLFlag
	}
	if l.client == l.process {
		flags |= ownClientFlag
	}
	e = append(e, byte(slices.Index(fCodes, l.f))|byte(slices.Index(typeCodes, l.outcome))<<2, flags)
	e = binary.AppendVarint(e, l.call-last.call)
	if l.completed() {
		e = binary.AppendVarint(e, l.done-l.call)
	}
	e = binary.AppendVarint(e, int64(l.invIndex)-int64(last.invIndex))
	e = binary.AppendVarint(e, int64(l.doneIndex)-int64(l.invIndex))
	last.call, last.invIndex = l.call, l.invIndex
	for _, v := range []int64{l.ttl, l.fence, l.queued, int64(l.process), l.began, l.tried} {
		e = binary.AppendVarint(e, v)
	}
	if flags&ownClientFlag == 0 {
		e = binary.AppendVarint(e, int64(l.client))
	}
	if flags&sameTTLFlag == 0 {
		e = binary.AppendVarint(e, l.ttlSaid)
	}
	if named {
		e = binary.AppendUvarint(e, uint64(m))
	} else {
		e = binary.AppendUvarint(e, uint64(len(l.lease)))
		e = append(e, l.lease...)
	}
	e = binary.AppendUvarint(e, uint64(len(l.owner)))
	return append(e, l.owner...)
}

// processSeq is M of a lease named pN.M by its own process N.
func processSeq(l *lockOp) (int, bool) {
	name := l.name.resolve(l.lease)
	return name.m(), name.ok() && name.n == l.process
}

// cutFlag marks a record whose completion left its key with no operation
// open; bit 0 of the flags is the operation's refused, and viaFlags its
// renewal's call. The rest say which fields a record leaves out
// (appendSpilled).
const cutFlag = 2

const (
	extendFlag, reacquireFlag = 4, 8
	// namedFlag: the lease is pN.M of its own process, written as M.
	namedFlag = 16
	// pendingFlag: no completion (done is noCompletion).
	pendingFlag = 32
	// sameTTLFlag: ttlSaid is ttl; ownClientFlag: client is process.
	sameTTLFlag, ownClientFlag = 64, 128
)

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
// (completion order), each from the reader's buffer (Peek) at once; the
// first error sticks.
type spillReader struct {
	br   *bufio.Reader
	keys []string
	left int    // records still to read
	long []byte // a record longer than the buffer, read whole
	last spillDeltas
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
	n := r.uvarint()
	if r.err == nil && n > 1<<25 { // two strings of a 16MB line at most
		r.err = errSpillCorrupt
	}
	var flags byte
	if r.err == nil {
		d := spillDecoder{b: r.bytes(int(n))}
		l, flags = d.record(r.keys, &r.last)
		r.err = cmp.Or(r.err, d.err)
	}
	if r.err != nil {
		r.err = fmt.Errorf("reading back the spilled history: %w", r.err)
		return l, 0, false, false
	}
	return l, l.keyID, flags&cutFlag != 0, true
}

// spillDecoder reads one record (appendSpilled) from its bytes; a field
// that runs past them, or a code out of range, is errSpillCorrupt.
type spillDecoder struct {
	b   []byte
	err error
}

func (d *spillDecoder) record(keys []string, last *spillDeltas) (l lockOp, flags byte) {
	id := d.uvarint()
	codes, flags := d.byte(), d.byte()
	if d.err != nil || id >= uint64(len(keys)) || int(codes&3) >= len(fCodes) || int(codes>>2) >= len(typeCodes) {
		d.err = errSpillCorrupt
		return l, 0
	}
	l.keyID = uint32(id)
	l.key = keys[id]
	l.f, l.outcome, l.refused, l.via = fCodes[codes&3], typeCodes[codes>>2], flags&1 == 1, viaOf(flags)
	l.call = last.call + d.varint()
	l.done = noCompletion
	if flags&pendingFlag == 0 {
		l.done = l.call + d.varint()
	}
	l.invIndex = int32(int64(last.invIndex) + d.varint())
	l.doneIndex = int32(int64(l.invIndex) + d.varint())
	last.call, last.invIndex = l.call, l.invIndex
	l.ttl, l.fence, l.queued, l.process, l.began, l.tried = d.varint(), d.varint(), d.varint(), int32(d.varint()), d.varint(), d.varint()
	l.client, l.ttlSaid = l.process, l.ttl
	if flags&ownClientFlag == 0 {
		l.client = int32(d.varint())
	}
	if flags&sameTTLFlag == 0 {
		l.ttlSaid = d.varint()
	}
	if flags&namedFlag != 0 {
		var name [2 + 2*20]byte // one allocation: the string
		b := strconv.AppendInt(append(name[:0], 'p'), int64(l.process), 10)
		m := d.uvarint()
		if m >= maxLeaseSeq || l.process < 0 {
			d.err = errSpillCorrupt
		}
		l.lease, l.name = string(strconv.AppendUint(append(b, '.'), m, 10)), leaseName{l.process, int32(m) + 1}
	} else {
		l.lease = d.str()
		l.name = nameOf(l.lease)
	}
	l.owner = d.str()
	if d.err == nil && len(d.b) > 0 {
		d.err = errSpillCorrupt // bytes left over
	}
	return l, flags
}

func (d *spillDecoder) byte() byte {
	if len(d.b) == 0 {
		d.err = errSpillCorrupt
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *spillDecoder) uvarint() uint64 {
	if len(d.b) > 0 && d.b[0] < 0x80 { // one byte, as most are: inlined
		x := uint64(d.b[0])
		d.b = d.b[1:]
		return x
	}
	return d.longUvarint()
}

func (d *spillDecoder) longUvarint() uint64 {
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errSpillCorrupt
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *spillDecoder) varint() int64 {
	ux := d.uvarint()
	return int64(ux>>1) ^ -int64(ux&1) // zigzag, as binary.Varint
}

// str reads a string, a copy: a window keeps few of a bucket's.
func (d *spillDecoder) str() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err = errSpillCorrupt
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
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
