package history

import (
	"bytes"
	"math"

	"github.com/deadbolt-lab/deadbolt/internal/strarena"
)

// fastDecoder decodes the lines every history is made of (a flat object
// of Op's own fields: printable ASCII strings without escapes, integers,
// booleans) in one pass over the line, where json.Unmarshal spent most
// of a long check's reading on reflection and a general parser's tree.
// It takes only text that json.Unmarshal decodes the same: a line with
// an escape, a byte outside printable ASCII, a name Op does not have or
// has twice, a value not of its field's plain kind (null, 1.0, 1e3,
// in_op's object), or anything else out of the ordinary, is declined,
// and json.Unmarshal decides it and words its error as before.
// fastdecode_test.go holds the two equal, and FuzzFastDecoder looks for
// a line where they are not.
type fastDecoder struct {
	// keys interns lock keys: a history has few, each on many lines.
	keys map[string]string
	// strs holds the other strings: leases, owners, errors.
	strs strarena.Arena
}

// decode fills op from line and reports whether it could; op is zeroed
// first either way.
func (f *fastDecoder) decode(line []byte, op *Op) bool {
	*op = Op{}
	s := flat{b: line}
	if !s.next('{') {
		return false
	}
	var seen uint32
	if !s.next('}') {
		for {
			name, ok := s.str()
			if !ok || !s.next(':') {
				return false
			}
			bit, ok := f.field(name, &s, op)
			if !ok || seen&bit != 0 { // a name twice: json.Unmarshal refuses it
				return false
			}
			seen |= bit
			if s.next(',') {
				continue
			}
			if s.next('}') {
				break
			}
			return false
		}
	}
	s.space()
	return s.i == len(s.b)
}

// flat reads the tokens of one line, taking only plain text (no escapes,
// no byte outside printable ASCII, so the only whitespace is the space).
type flat struct {
	b []byte
	i int
}

func (s *flat) space() {
	for s.i < len(s.b) && s.b[s.i] == ' ' {
		s.i++
	}
}

// next consumes c, after spaces, if it comes next. c is looked for
// first: the harness writes no spaces.
func (s *flat) next(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	if s.i < len(s.b) && s.b[s.i] == ' ' {
		s.space()
		if s.i < len(s.b) && s.b[s.i] == c {
			s.i++
			return true
		}
	}
	return false
}

// str reads a string: its bytes are the text between the quotes, as the
// line has no escapes.
func (s *flat) str() ([]byte, bool) {
	if !s.next('"') {
		return nil, false
	}
	// The strings are short: a loop beats IndexByte's call. Only plain
	// text is taken (see plain): outside strings, the grammar takes no
	// other byte either.
	for end := s.i; end < len(s.b); end++ {
		if k := strClass[s.b[end]]; k != 0 {
			if k == endStr {
				v := s.b[s.i:end]
				s.i = end + 1
				return v, true
			}
			return nil, false
		}
	}
	return nil, false
}

// strClass sorts the bytes of a string: plain text (0), its closing
// quote, and what the decoder declines (a control byte, a backslash,
// anything outside printable ASCII). One load per byte, not four tests.
var strClass = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case c == '"':
			t[c] = endStr
		case c < 0x20 || c > 0x7e || c == '\\':
			t[c] = notPlain
		}
	}
	return t
}()

const endStr, notPlain = 1, 2

// integer reads a JSON number written as an integer (-?(0|[1-9][0-9]*))
// that fits int64: a fraction or an exponent after it is declined.
func (s *flat) integer() (int64, bool) {
	if s.i < len(s.b) && s.b[s.i] == ' ' {
		s.space()
	}
	b, i := s.b, s.i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	start := i
	// 18 digits cannot overflow: longer numbers are read again, with care.
	var n int64
	for i < len(b) && b[i]-'0' <= 9 {
		n = n*10 + int64(b[i]-'0')
		i++
	}
	switch {
	case i == start, i-start > 1 && b[start] == '0':
		return 0, false
	case i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E'):
		return 0, false
	case i-start > 18:
		var ok bool
		if n, ok = longInteger(b[start:i], neg); !ok {
			return 0, false
		}
	case neg:
		n = -n
	}
	s.i = i
	return n, true
}

// longInteger reads digits that may not fit int64, accumulated negative
// so that the least int64 fits.
func longInteger(digits []byte, neg bool) (int64, bool) {
	var n int64
	for _, c := range digits {
		d := int64(c - '0')
		if n < (math.MinInt64+d)/10 {
			return 0, false
		}
		n = n*10 - d
	}
	if !neg {
		if n == math.MinInt64 {
			return 0, false
		}
		n = -n
	}
	return n, true
}

// boolean reads true or false.
func (s *flat) boolean() (v, ok bool) {
	s.space()
	switch rest := s.b[s.i:]; {
	case bytes.HasPrefix(rest, []byte("true")):
		s.i += 4
		return true, true
	case bytes.HasPrefix(rest, []byte("false")):
		s.i += 5
		return false, true
	}
	return false, false
}

// text reads a string as the one of names it equals (no allocation) or
// as a copy in strs.
func (s *flat) text(names []string, strs *strarena.Arena) (string, bool) {
	raw, ok := s.str()
	if !ok {
		return "", false
	}
	for _, n := range names {
		if string(raw) == n {
			return n, true
		}
	}
	return strs.String(raw), true
}

func num[T int | int64](s *flat) (T, bool) {
	n, ok := s.integer()
	return T(n), ok
}

// field sets the member name of op to the value s reads next, or reports
// that it cannot: a name Op does not have, or a value not of the field's
// plain kind. bit is the field's own, to find a name given twice. name
// stays bytes: a switch on string(name) does not copy it. It is long
// because it is one case per field of Op, each a line or two.
func (f *fastDecoder) field(name []byte, s *flat, op *Op) (bit uint32, ok bool) {
	i := -1
	switch string(name) {
	case "index":
		i = 0
		op.Index, ok = num[int](s)
	case "time":
		i = 1
		op.Time, ok = s.integer()
	case "process":
		i = 4
		op.Process, ok = num[int](s)
	case "fence":
		i = 9
		op.Fence, ok = s.integer()
	case "seq":
		i = 10
		op.Seq, ok = s.integer()
	case "ttl":
		i = 11
		op.TTL, ok = s.integer()
	case "deadline":
		i = 12
		op.Deadline, ok = s.integer()
	case "queued":
		i = 13
		op.Queued, ok = s.integer()
	case "by":
		i = 27
		op.By, ok = s.integer()
	case "next":
		i = 23
		op.Next, ok = num[int](s)
	case "value":
		i = 15
		var n int64
		if n, ok = s.integer(); ok {
			op.Value = &n
		}
	case "prev":
		i = 16
		var n int64
		if n, ok = s.integer(); ok {
			op.Prev = &n
		}
	case "refused":
		i = 14
		op.Refused, ok = s.boolean()
	case "type":
		i = 3
		var t string
		t, ok = s.text(typeNames, &f.strs)
		op.Type = Type(t)
	case "f":
		i = 5
		var t string
		t, ok = s.text(fNames, &f.strs)
		op.F = F(t)
	case "stamp":
		i = 2
		op.Stamp, ok = s.text(stampNames, &f.strs)
	case "key":
		i = 6
		op.Key, ok = f.key(s)
	case "lease":
		i = 7
		op.Lease, ok = s.text(nil, &f.strs)
	case "owner":
		i = 8
		op.Owner, ok = s.text(nil, &f.strs)
	case "fault":
		i = 17
		op.Fault, ok = s.text(nil, &f.strs)
	case "fault_id":
		i = 18
		op.FaultID, ok = s.text(nil, &f.strs)
	case "node":
		i = 19
		op.Node, ok = s.text(nil, &f.strs)
	case "target":
		i = 20
		op.Target, ok = s.text(nil, &f.strs)
	case "phase":
		i = 21
		var t string
		t, ok = s.text(nil, &f.strs)
		op.Phase = Phase(t)
	case "error":
		i = 22
		op.Error, ok = s.text(nil, &f.strs)
	case "began":
		i = 25
		op.Began, ok = s.integer()
	case "ended":
		i = 26
		op.Ended, ok = s.integer()
	case "tried":
		i = 28
		op.Tried, ok = s.integer()
	case "via":
		i = 24
		op.Via, ok = s.text(viaNames, &f.strs)
	}
	if i < 0 {
		return 0, false
	}
	return 1 << i, ok
}

// key reads a lock key, interned.
func (f *fastDecoder) key(s *flat) (string, bool) {
	raw, ok := s.str()
	if !ok {
		return "", false
	}
	if k, ok := f.keys[string(raw)]; ok {
		return k, true
	}
	k := string(raw)
	if len(f.keys) < 1<<12 {
		if f.keys == nil {
			f.keys = map[string]string{}
		}
		f.keys[k] = k
	}
	return k, true
}

var (
	stampNames = []string{StampClient}
	viaNames   = []string{ViaExtend, ViaReacquire}
)
