package checker

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/deadbolt-lab/deadbolt/history"
)

// spill keeps a streamed history's lock operations on disk, one bucket
// file per group of keys, so that reading a history holds only the
// operations still open: each completed operation is written out, and
// the keys are later read back a bucket at a time (see CheckFile).
type spill struct {
	dir     string
	buckets []*spillBucket
	// keys are the keys in the order first seen; a key's bucket is its
	// place in that order modulo the bucket count, so buckets hold
	// about as many keys each.
	keys  []string
	keyID map[string]uint32
	buf   []byte
	err   error
}

type spillBucket struct {
	f *os.File
	w *bufio.Writer
	n int // records written
}

// spillBuckets bounds the open files and their write buffers (64 KiB
// each); with more keys than buckets a bucket holds several keys.
const spillBuckets = 64

func newSpill() (*spill, error) {
	dir, err := os.MkdirTemp("", "deadbolt-check-*")
	if err != nil {
		return nil, err
	}
	return &spill{dir: dir, keyID: map[string]uint32{}}, nil
}

// close removes the spill's files.
func (s *spill) close() {
	for _, b := range s.buckets {
		if b != nil {
			b.f.Close()
		}
	}
	os.RemoveAll(s.dir)
}

// fCodes and typeCodes number the values a lockOp's f and outcome take.
var (
	fCodes    = []history.F{history.Acquire, history.Release, history.Renew, history.Lost}
	typeCodes = []history.Type{history.Invoke, history.OK, history.Fail, history.Info}
)

// put writes l out; the first error sticks and is returned by flush.
func (s *spill) put(l *lockOp) {
	if s.err != nil {
		return
	}
	id, ok := s.keyID[l.key]
	if !ok {
		id = uint32(len(s.keys))
		s.keys = append(s.keys, l.key)
		s.keyID[l.key] = id
	}
	bi := int(id) % spillBuckets
	for len(s.buckets) <= bi {
		s.buckets = append(s.buckets, nil)
	}
	b := s.buckets[bi]
	if b == nil {
		f, err := os.CreateTemp(s.dir, "bucket-*")
		if err != nil {
			s.err = err
			return
		}
		b = &spillBucket{f: f, w: bufio.NewWriterSize(f, 64<<10)}
		s.buckets[bi] = b
	}
	e := s.buf[:0]
	e = binary.AppendUvarint(e, uint64(id))
	e = append(e, byte(slices.Index(fCodes, l.f)), byte(slices.Index(typeCodes, l.outcome)), b2byte(l.refused))
	for _, v := range []int64{l.call, l.done, l.ttl, l.fence, l.queued, int64(l.invIndex), int64(l.doneIndex), int64(l.process), int64(l.client)} {
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

// load reads bucket i back: its keys' lock operations, each key's in
// invocation order as Input.locks holds them.
func (s *spill) load(i int) (map[string][]lockOp, error) {
	b := s.buckets[i]
	if b == nil {
		return nil, nil
	}
	if _, err := b.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(b.f, 64<<10)
	out := map[string][]lockOp{}
	for range b.n {
		l, err := s.read(r)
		if err != nil {
			return nil, fmt.Errorf("reading back the spilled history: %w", err)
		}
		out[l.key] = append(out[l.key], l)
	}
	for _, ls := range out {
		slices.SortFunc(ls, func(a, b lockOp) int { return cmp.Compare(a.invIndex, b.invIndex) })
	}
	return out, nil
}

var errSpillCorrupt = errors.New("corrupt record")

func (s *spill) read(r *bufio.Reader) (lockOp, error) {
	var l lockOp
	id, err := binary.ReadUvarint(r)
	if err != nil {
		return l, err
	}
	if id >= uint64(len(s.keys)) {
		return l, errSpillCorrupt
	}
	l.key = s.keys[id]
	var codes [3]byte
	if _, err := io.ReadFull(r, codes[:]); err != nil {
		return l, err
	}
	if int(codes[0]) >= len(fCodes) || int(codes[1]) >= len(typeCodes) {
		return l, errSpillCorrupt
	}
	l.f, l.outcome, l.refused = fCodes[codes[0]], typeCodes[codes[1]], codes[2] == 1
	var v [9]int64
	for i := range v {
		if v[i], err = binary.ReadVarint(r); err != nil {
			return l, err
		}
	}
	l.call, l.done, l.ttl, l.fence, l.queued = v[0], v[1], v[2], v[3], v[4]
	l.invIndex, l.doneIndex, l.process, l.client = int32(v[5]), int32(v[6]), int32(v[7]), int32(v[8])
	for _, dst := range []*string{&l.lease, &l.owner} {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return l, err
		}
		if n > 1<<20 {
			return l, errSpillCorrupt
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return l, err
		}
		*dst = string(buf)
	}
	return l, nil
}
