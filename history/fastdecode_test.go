package history

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/stretchr/testify/require"
)

// The fast decoder may decline any line, but a line it takes must decode
// exactly as json.Unmarshal decodes it, and never be one json.Unmarshal
// refuses.
func sameAsUnmarshal(t testing.TB, line []byte) (fast bool) {
	t.Helper()
	var f fastDecoder
	var got Op
	if !f.decode(line, &got) {
		return false
	}
	if !plain(line) {
		t.Fatalf("the fast decoder took %q, which is not plain text", line)
	}
	var want Op
	err := jsonv2.Unmarshal(line, &want, decodeOptions)
	if err != nil {
		t.Fatalf("the fast decoder took %q, which json.Unmarshal refuses: %v", line, err)
	}
	if gj, wj := mustJSON(t, got), mustJSON(t, want); gj != wj {
		t.Fatalf("%q decodes differently:\nfast:      %s\nUnmarshal: %s", line, gj, wj)
	}
	return true
}

func mustJSON(t testing.TB, op Op) string {
	b, err := json.Marshal(op)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lines that a history holds, and look-alikes that must go to the general
// decoder (or be refused by both).
var fastCorpus = []string{
	`{"index":0,"time":15375,"type":"invoke","process":1,"f":"acquire","key":"k83","lease":"p1.1","ttl":30000000}`,
	`{"index":7,"time":99,"type":"ok","process":1,"f":"acquire","key":"k83","lease":"p1.1","owner":"tok","fence":3,"seq":2,"ttl":30000000,"deadline":123,"queued":5}`,
	`{"index":8,"time":100,"type":"fail","process":2,"f":"acquire","key":"k","lease":"p2.1","refused":true}`,
	`{"index":8,"time":100,"type":"fail","process":2,"f":"acquire","key":"k","lease":"p2.1","refused":false}`,
	`{"index":9,"time":120,"type":"invoke","process":2,"f":"renew","key":"k","lease":"p2.1","via":"extend"}`,
	`{"index":9,"time":101,"stamp":"client","type":"invoke","process":3,"f":"renew","key":"k","lease":"p3.1"}`,
	`{"index":10,"time":102,"type":"info","process":3,"f":"release","key":"k","lease":"p3.1","error":"timeout","next":51}`,
	`{"index":11,"time":103,"type":"ok","process":4,"f":"read","key":"k","value":-7}`,
	`{"index":12,"time":104,"type":"ok","process":4,"f":"write","key":"k","value":0,"prev":9223372036854775807}`,
	`{"index":13,"time":105,"type":"invoke","process":-1,"f":"fault-start","fault":"kill","fault_id":"f1","node":"redis-1","target":"node:redis-1"}`,
	`{"index":14,"time":106,"type":"ok","process":-1,"f":"phase","fault":"phase","phase":"faults"}`,
	`{"index":15,"time":107,"type":"ok","process":-1,"f":"fault-end","fault":"pause","in_op":{"op":"acquire","inside":true}}`,
	`{"index":16,"time":108,"type":"weird","process":1,"f":"nope","key":"k","lease":"x"}`,
	` {"index":17,"time":1,"type":"ok","process":1,"f":"acquire","key":"k","lease":"p1.1"} `,
	// for the general decoder:
	`{"index":1,"index":2,"time":1,"type":"ok","process":1,"f":"acquire"}`,
	`{"Index":1,"time":1,"type":"ok","process":1,"f":"acquire"}`,
	`{"index":1.0,"time":1,"type":"ok","process":1,"f":"acquire"}`,
	`{"index":1e2,"time":1,"type":"ok","process":1,"f":"acquire"}`,
	`{"index":99999999999999999999,"time":1}`,
	`{"index":null,"time":1,"key":null}`,
	`{"index":"1","time":1}`,
	`{"key":"a\"b","lease":"\u0070"}`,
	`{"type":"\u006fk"}`,
	`{"key":"caf\u00e9 ü"}`,
	"{\"key\":\"\xff\"}",
	"{\"key\":\"a\tb\"}",
	`{"unknown":1}`,
	`{"refused":1}`,
	`{"value":null,"prev":null}`,
	`{"index":1}{"index":2}`,
	`{"index":1} x`,
	`{"index":1`,
	`{"index":1,}`,
	`[1]`,
	`"x"`,
	`null`,
	`{}`,
	`{"in_op":null}`,
	`{"index":-0}`,
	`{"fence":-9223372036854775808,"seq":9223372036854775807}`,
	`{"fence":-9223372036854775809}`,
	`{"seq":9223372036854775808}`,
	`{"seq":999999999999999999,"fence":-999999999999999999,"ttl":1000000000000000000}`,
	`{"seq":0000}`,
	`{"seq":19223372036854775807}`,
	`{"index":NaN}`,
	`{"index":nan}`,
	`{"index":-inf}`,
	`{"index":Infinity}`,
	`{"index":+1}`,
	`{"index":1-2}`,
	`{"index":1.}`,
	`{"index":-}`,
	`{"index":0x10}`,
	`{"refused":truex}`,
	`{"refused":tru}`,
	`{"refused":True}`,
	`{"key" : "k" , "time" : 3 }`,
	`{"time":1,"time":1}`,
	`{"key":"k","key":"k"}`,
	`{"key":[1]}`,
	`{"key":{}}`,
	`{"in_op":{"op":"acquire"},"f":"fault-end","type":"ok","process":-1,"fault":"x"}`,
	`{"index":01}`,
}

func TestFastDecoderAgrees(t *testing.T) {
	took := 0
	for _, l := range fastCorpus {
		if sameAsUnmarshal(t, []byte(l)) {
			took++
		}
	}
	require.Greater(t, took, 10, "the fast decoder took too few of the ordinary lines")
	// Every line of the corpus cut, with a byte changed, or with a byte
	// dropped.
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(`{}[]":,.-+eE0159tfnulx\ ` + "\xff\x00\t")
	for _, l := range fastCorpus {
		for range 300 {
			b := []byte(l)
			switch i := r.IntN(len(b)); r.IntN(3) {
			case 0:
				b = b[:i]
			case 1:
				b[i] = alphabet[r.IntN(len(alphabet))]
			case 2:
				b = append(b[:i:i], b[i+1:]...)
			}
			sameAsUnmarshal(t, bytes.TrimSpace(b))
		}
	}
}

func TestPlain(t *testing.T) {
	for c := range 256 {
		for at := range 11 {
			line := []byte("0123456789a")
			line[at] = byte(c)
			want := c >= 0x20 && c <= 0x7e && c != '\\'
			require.Equal(t, want, plain(line), "byte %#x at %d", c, at)
		}
	}
}

func FuzzFastDecoder(f *testing.F) {
	for _, l := range fastCorpus {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) { sameAsUnmarshal(t, line) })
}

// BenchmarkFastDecoder decodes lines as a long history has them: each
// line of the corpus the fast decoder takes, in turn.
func BenchmarkFastDecoder(b *testing.B) {
	var f fastDecoder
	var lines [][]byte
	var op Op
	for _, l := range fastCorpus {
		if f.decode([]byte(l), &op) {
			lines = append(lines, []byte(l))
		}
	}
	b.ResetTimer()
	for i := range b.N {
		f.decode(lines[i%len(lines)], &op)
	}
}

// plain reports whether line is printable ASCII without a backslash,
// eight bytes at a time: the only text the fast decoder may take.
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
