package history

import (
	"bytes"
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
	tail, err := Scan(r, func(op *Op, _ int) error {
		ops = append(ops, *op)
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
		string(Order), string(FaultStart), string(FaultEnd), string(HealthBefore), string(HealthAfter), string(Inspect)}
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
