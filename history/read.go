package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// ReadFile reads a history.jsonl file.
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
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	line := 0
	var lastHarness int64
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var op Op
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&op); err != nil {
			return nil, fmt.Errorf("line %d: not a history operation: %v", line, err)
		}
		if err := op.Validate(); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		if op.Index != len(ops) {
			return nil, fmt.Errorf("line %d: index %d, want %d", line, op.Index, len(ops))
		}
		// Harness-stamped times never go backwards; client-stamped events
		// are recorded when their report arrives, a little late.
		if op.Stamp == "" {
			if op.Time < lastHarness {
				return nil, fmt.Errorf("line %d: time goes backwards", line)
			}
			lastHarness = op.Time
		}
		ops = append(ops, op)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("empty history")
	}
	if _, err := Pair(ops); err != nil {
		return nil, err
	}
	return ops, nil
}
