package checker

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/deadbolt-lab/deadbolt/history"
)

// spill keeps a streamed history's lock operations on disk, one bucket
// file per group of keys, so that reading a history holds only the
// operations still open: each completed operation is written out, and
// the keys are later read back a bucket at a time (see CheckFile).
type spill struct {
	buckets []*spillBucket
	// keys are the keys in the order first seen; a key's bucket is its
	// place in that order modulo the bucket count, so buckets hold
	// about as many keys each.
	keys  []string
	keyID map[string]uint32
	// count is how many records each key has, so that load makes each
	// key's slice once at its size.
	count []int
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

func newSpill() *spill { return &spill{keyID: map[string]uint32{}} }

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
		s.count = append(s.count, 0)
	}
	s.count[id]++
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
// invocation order as Input.locks holds them. The bucket is read whole
// into one string that the leases and tokens are cut from.
func (s *spill) load(i int) (map[string][]lockOp, error) {
	b := s.buckets[i]
	if b == nil {
		return nil, nil
	}
	raw, err := readAll(b.f)
	if err != nil {
		return nil, err
	}
	d := spillDecoder{data: string(raw)}
	raw = nil
	out := map[string][]lockOp{}
	for id := i; id < len(s.keys); id += spillBuckets {
		out[s.keys[id]] = make([]lockOp, 0, s.count[id])
	}
	for range b.n {
		l := d.record(s.keys)
		if d.err != nil {
			return nil, fmt.Errorf("reading back the spilled history: %w", d.err)
		}
		out[l.key] = append(out[l.key], l)
	}
	for _, ls := range out {
		slices.SortFunc(ls, func(a, b lockOp) int { return cmp.Compare(a.invIndex, b.invIndex) })
	}
	return out, nil
}

// readAll reads f from its start.
func readAll(f *os.File) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, st.Size())
	_, err = f.ReadAt(buf, 0)
	return buf, err
}

var errSpillCorrupt = errors.New("corrupt record")

// spillDecoder reads records from data; the first error sticks.
type spillDecoder struct {
	data string
	at   int
	err  error
}

func (d *spillDecoder) uvarint() uint64 {
	var v uint64
	for shift := 0; d.err == nil; shift += 7 {
		if d.at >= len(d.data) || shift > 63 {
			d.err = errSpillCorrupt
			break
		}
		c := d.data[d.at]
		d.at++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	return 0
}

func (d *spillDecoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1) // binary.AppendVarint's zig-zag
}

func (d *spillDecoder) str() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.data)-d.at) {
		d.err = cmp.Or(d.err, errSpillCorrupt)
		return ""
	}
	v := d.data[d.at : d.at+int(n)]
	d.at += int(n)
	return v
}

func (d *spillDecoder) record(keys []string) lockOp {
	var l lockOp
	id := d.uvarint()
	if d.err != nil || id >= uint64(len(keys)) || d.at+3 > len(d.data) {
		d.err = cmp.Or(d.err, errSpillCorrupt)
		return l
	}
	l.key = keys[id]
	fc, tc := int(d.data[d.at]), int(d.data[d.at+1])
	if fc >= len(fCodes) || tc >= len(typeCodes) {
		d.err = errSpillCorrupt
		return l
	}
	l.f, l.outcome, l.refused = fCodes[fc], typeCodes[tc], d.data[d.at+2] == 1
	d.at += 3
	l.call, l.done, l.ttl, l.fence, l.queued = d.varint(), d.varint(), d.varint(), d.varint(), d.varint()
	l.invIndex, l.doneIndex, l.process, l.client = int32(d.varint()), int32(d.varint()), int32(d.varint()), int32(d.varint())
	l.lease, l.owner = d.str(), d.str()
	return l
}
