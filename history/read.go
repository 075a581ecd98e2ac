package history

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ReadFile reads a history.jsonl file whole; a last line cut short by a
// crash is an error here (see Scan for a reader that checks what came
// before it).
func ReadFile(path string) ([]Op, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ops, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ops, nil
}

// Parse parses a JSON-lines history and validates every operation and the
// pairing of invocations with completions. Errors name the line.
func Parse(r io.Reader) ([]Op, error) {
	var ops []Op
	tail, err := Scan(r, func(op Op, _ int) error {
		ops = append(ops, op)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if tail.Cut() {
		return nil, fmt.Errorf("%s", tail)
	}
	return ops, nil
}

// Tail says how a history ended. A run that crashed while writing leaves
// its last line without a newline and not a whole operation; everything
// before it is still a history.
type Tail struct {
	// CutLine is the number of that last line, 0 when the history ended
	// cleanly; CutBytes is how much of it was written.
	CutLine  int `json:"cut_line,omitempty"`
	CutBytes int `json:"cut_bytes,omitempty"`
}

// Cut reports whether the last line was cut short.
func (t Tail) Cut() bool { return t.CutLine > 0 }

func (t Tail) String() string {
	if !t.Cut() {
		return "the history ended cleanly"
	}
	return fmt.Sprintf("line %d, the last, was cut short (%d bytes, no newline, not a whole operation): the run stopped while writing it", t.CutLine, t.CutBytes)
}

// decodeOptions make decoding reject a field Op does not have (a history
// written by something else must not be half understood), and read the
// type and f of an operation as the constants they name, rather than
// allocating each line's own copy.
var decodeOptions = json.JoinOptions(
	json.RejectUnknownMembers(true),
	json.WithUnmarshalers(json.JoinUnmarshalers(
		json.UnmarshalFromFunc(func(dec *jsontext.Decoder, t *Type) error {
			s, err := constant(dec, typeNames)
			*t = Type(s)
			return err
		}),
		json.UnmarshalFromFunc(func(dec *jsontext.Decoder, f *F) error {
			s, err := constant(dec, fNames)
			*f = F(s)
			return err
		}),
	)),
)

var (
	typeNames = []string{string(Invoke), string(OK), string(Fail), string(Info)}
	fNames    = []string{string(Acquire), string(Release), string(Renew), string(Lost), string(Read), string(Write),
		string(Order), string(FaultStart), string(FaultEnd)}
)

// constant reads a JSON string, returning the one of names it equals
// without allocating, or a copy of it when it is none of them (Validate
// rejects it then).
func constant(dec *jsontext.Decoder, names []string) (string, error) {
	v, err := dec.ReadValue()
	if err != nil {
		return "", err
	}
	if v.Kind() != '"' {
		return "", fmt.Errorf("want a string, got %s", v)
	}
	if raw := v[1 : len(v)-1]; bytes.IndexByte(raw, '\\') < 0 {
		for _, n := range names {
			if string(raw) == n {
				return n, nil
			}
		}
	}
	b, err := jsontext.AppendUnquote(nil, v)
	return string(b), err
}

// Scan reads a JSON-lines history one operation at a time, validating each
// as Parse does (fields, index sequence, harness time order, pairing), and
// calls fn with it and its operation number (see Pairer.Add). Errors name
// the line. A last line that lacks its newline and is not a whole
// operation is not an error: Scan stops there and says so in the Tail.
func Scan(r io.Reader, fn func(op Op, n int) error) (Tail, error) {
	var tail Tail
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
	var (
		p           Pairer
		op          Op // one for every line: decoding into it allocates it once
		line, count int
		lastHarness int64
	)
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		op = Op{} // decoding merges into what is there
		if err := json.Unmarshal(b, &op, decodeOptions); err != nil {
			if unterminated && !jsontext.Value(b).IsValid() {
				tail = Tail{CutLine: line, CutBytes: len(sc.Bytes())}
				break
			}
			return tail, fmt.Errorf("line %d: not a history operation: %v", line, err)
		}
		if err := op.Validate(); err != nil {
			return tail, fmt.Errorf("line %d: %v", line, err)
		}
		if op.Index != count {
			return tail, fmt.Errorf("line %d: index %d, want %d", line, op.Index, count)
		}
		// Harness-stamped times never go backwards; client-stamped events
		// are recorded when their report arrives, a little late.
		if op.Stamp == "" {
			if op.Time < lastHarness {
				return tail, fmt.Errorf("line %d: time goes backwards", line)
			}
			lastHarness = op.Time
		}
		n, err := p.Add(op)
		if err != nil {
			return tail, fmt.Errorf("line %d: %v", line, err)
		}
		if err := fn(op, n); err != nil {
			return tail, err
		}
		count++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return tail, fmt.Errorf("line %d: longer than 16MB: not a history operation", line+1)
		}
		return tail, fmt.Errorf("line %d: %w", line+1, err)
	}
	if count == 0 {
		if tail.Cut() {
			return tail, fmt.Errorf("empty history: %s", tail)
		}
		return tail, fmt.Errorf("empty history")
	}
	return tail, nil
}
