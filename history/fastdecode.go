package history

import (
	"encoding/binary"
	"math"

	"github.com/valyala/fastjson"
)

// fastDecoder decodes the lines every history is made of (a flat object
// of Op's own fields: printable ASCII strings without escapes, integers,
// booleans) with fastjson, where json.Unmarshal spent most of a long
// check's reading on reflection and its own tokenizer. It takes only
// text that json.Unmarshal decodes the same: a line with an escape, a
// byte outside printable ASCII, a name Op does not have or has twice, a
// value not of its field's plain kind (null, 1.0, 1e3, in_op's object),
// or anything fastjson refuses, is declined, and json.Unmarshal decides
// it and words its error as before. fastdecode_test.go holds the two
// equal, and FuzzFastDecoder looks for a line where they are not.
type fastDecoder struct {
	p fastjson.Parser
	// keys interns lock keys: a history has few, each on many lines.
	keys map[string]string
	num  []byte // integer's scratch
}

// decode fills op from line and reports whether it could; op is zeroed
// first either way.
func (f *fastDecoder) decode(line []byte, op *Op) bool {
	*op = Op{}
	if !plain(line) {
		return false
	}
	v, err := f.p.ParseBytes(line)
	if err != nil || v.Type() != fastjson.TypeObject {
		return false
	}
	o, _ := v.Object()
	ok := true
	var seen uint32
	o.Visit(func(name []byte, v *fastjson.Value) {
		if !ok {
			return
		}
		bit := uint32(0)
		bit, ok = f.field(name, v, op)
		if ok && seen&bit != 0 {
			ok = false // a name twice: json.Unmarshal refuses it
		}
		seen |= bit
	})
	return ok
}

// field sets the member name of op to v, or reports that it cannot: a
// name Op does not have, or a value not of the field's plain kind. bit
// is the field's own, to find a name given twice. name stays bytes: a
// switch on string(name) does not copy it.
func (f *fastDecoder) field(name []byte, v *fastjson.Value, op *Op) (bit uint32, ok bool) {
	i := -1
	switch string(name) {
	case "index":
		i = 0
		op.Index, ok = integer[int](f, v)
	case "time":
		i = 1
		op.Time, ok = integer[int64](f, v)
	case "process":
		i = 4
		op.Process, ok = integer[int](f, v)
	case "fence":
		i = 9
		op.Fence, ok = integer[int64](f, v)
	case "seq":
		i = 10
		op.Seq, ok = integer[int64](f, v)
	case "ttl":
		i = 11
		op.TTL, ok = integer[int64](f, v)
	case "deadline":
		i = 12
		op.Deadline, ok = integer[int64](f, v)
	case "queued":
		i = 13
		op.Queued, ok = integer[int64](f, v)
	case "next":
		i = 23
		op.Next, ok = integer[int](f, v)
	case "value", "prev":
		i = 15 + b2i(string(name) == "prev")
		var n int64
		if n, ok = integer[int64](f, v); ok {
			if string(name) == "value" {
				op.Value = &n
			} else {
				op.Prev = &n
			}
		}
	case "refused":
		i = 14
		switch v.Type() {
		case fastjson.TypeTrue:
			op.Refused, ok = true, true
		case fastjson.TypeFalse:
			ok = true
		}
	case "type":
		i = 3
		var s string
		s, ok = str(v, typeNames)
		op.Type = Type(s)
	case "f":
		i = 5
		var s string
		s, ok = str(v, fNames)
		op.F = F(s)
	case "stamp":
		i = 2
		op.Stamp, ok = str(v, stampNames)
	case "key":
		i = 6
		if ok = v.Type() == fastjson.TypeString; ok {
			raw, _ := v.StringBytes()
			if op.Key, ok = f.keys[string(raw)]; !ok && len(f.keys) < 1<<12 {
				if f.keys == nil {
					f.keys = map[string]string{}
				}
				op.Key = string(raw)
				f.keys[op.Key] = op.Key
			} else if !ok {
				op.Key = string(raw)
			}
			ok = true
		}
	case "lease":
		i = 7
		op.Lease, ok = str(v, nil)
	case "owner":
		i = 8
		op.Owner, ok = str(v, nil)
	case "fault":
		i = 17
		op.Fault, ok = str(v, nil)
	case "fault_id":
		i = 18
		op.FaultID, ok = str(v, nil)
	case "node":
		i = 19
		op.Node, ok = str(v, nil)
	case "target":
		i = 20
		op.Target, ok = str(v, nil)
	case "phase":
		i = 21
		var s string
		s, ok = str(v, nil)
		op.Phase = Phase(s)
	case "error":
		i = 22
		op.Error, ok = str(v, nil)
	case "began":
		i = 25
		op.Began, ok = integer[int64](f, v)
	case "ended":
		i = 26
		op.Ended, ok = integer[int64](f, v)
	case "via":
		i = 24
		op.Via, ok = str(v, viaNames)
	}
	if i < 0 {
		return 0, false
	}
	return 1 << i, ok
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

var (
	stampNames = []string{StampClient}
	viaNames   = []string{ViaExtend, ViaReacquire}
)

// plain reports whether line is printable ASCII without a backslash,
// eight bytes at a time (every line read is tested).
func plain(line []byte) bool {
	for len(line) >= 8 {
		w := binary.LittleEndian.Uint64(line)
		if (w|below(w, 0x20)|below(w^0x7f*ones, 1)|below(w^'\\'*ones, 1))&highs != 0 {
			return false
		}
		line = line[8:]
	}
	for _, c := range line {
		if c < 0x20 || c > 0x7e || c == '\\' {
			return false
		}
	}
	return true
}

const ones, highs = 0x0101010101010101, 0x8080808080808080

// below has a byte's high bit set when some byte of w is below n
// (n <= 0x80; exact about whether any is, not which).
func below(w uint64, n uint64) uint64 { return (w - n*ones) &^ w & highs }

// integer reads a JSON number written as an integer (-?(0|[1-9][0-9]*),
// JSON's own form, which fastjson does not check) that fits T.
// Its text goes through f.num: a buffer of its own on the stack would
// escape into MarshalTo, an allocation per number.
func integer[T int | int64](f *fastDecoder, v *fastjson.Value) (T, bool) {
	if v.Type() != fastjson.TypeNumber {
		return 0, false
	}
	f.num = v.MarshalTo(f.num[:0])
	digits := f.num
	neg := len(digits) > 0 && digits[0] == '-'
	if neg {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 1 && digits[0] == '0' {
		return 0, false
	}
	// Accumulated negative, so that the least int64 fits.
	var n int64
	for _, c := range digits {
		d := int64(c) - '0'
		if d < 0 || d > 9 || n < (math.MinInt64+d)/10 {
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
	return T(n), true
}

// str reads a JSON string (without escapes: decode saw to it), as the
// one of names it equals (no allocation) or as a copy.
func str(v *fastjson.Value, names []string) (string, bool) {
	if v.Type() != fastjson.TypeString {
		return "", false
	}
	raw, _ := v.StringBytes()
	for _, n := range names {
		if string(raw) == n {
			return n, true
		}
	}
	return string(raw), true
}
