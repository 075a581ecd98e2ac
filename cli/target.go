package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// readTarget reads --target's file: an existing deployment as endpoints
// (docs/architecture.md, "Running against a deployment"), refused with its
// reason before anything starts.
func readTarget(path string, o *scenarios.RunOptions) error {
	if path == "" {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return badInput("--target: %v", err)
	}
	if !st.Mode().IsRegular() {
		return badInput("--target: %s is not a regular file (%s)", path, st.Mode())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return badInput("--target: %v", err)
	}
	var t endpoints.Endpoints
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return badInput("--target %s: not a deployment's endpoints: %v", path, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badInput("--target %s: more after the JSON object", path)
	}
	if err := t.Check(); err != nil {
		return badInput("--target %s: %v", path, err)
	}
	o.Target = &t
	return nil
}
