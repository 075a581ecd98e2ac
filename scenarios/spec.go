package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/deadbolt-lab/deadbolt/endpoints"
)

// SpecFile is the name of a run's full description in its directory.
const SpecFile = "scenario.json"

// RunSpec is scenario.json: the scenario as it ran and what the run
// derived, written before it starts, so that a stored run can be
// re-checked (which checkers apply, the TTL) and re-run without the code
// that defined it. A scenario file is the same schema with the derived
// fields optional (file.go).
type RunSpec struct {
	Seed uint64 `json:"seed"`
	Scenario
	Checkers []string `json:"checkers"`
	// Reentrant: the lock lets a holder re-enter a key it holds, and the
	// checkers judge a client's holds of one key as one.
	Reentrant bool `json:"reentrant,omitempty"`
	// Driver is the command that ran each client.
	Driver []string `json:"driver"`
	// Target is the existing deployment the run went against (--target),
	// its password redacted; absent when deadbolt started the cluster.
	Target *endpoints.Endpoints `json:"target,omitempty"`
}

// UnmarshalJSON reads scenario.json, the old *_ms fields of runs stored
// before durations were Go duration strings too (upgradeLegacy).
func (r *RunSpec) UnmarshalJSON(b []byte) error {
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if err := upgradeLegacy(raw); err != nil {
		return err
	}
	up, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	type plain RunSpec // without this method
	return json.Unmarshal(up, (*plain)(r))
}

func writeSpec(dir string, r RunSpec) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, SpecFile), append(b, '\n'), 0o644)
}

// ReadSpec reads a run directory's scenario.json, unknown fields refused.
func ReadSpec(dir string) (RunSpec, error) {
	var r RunSpec
	path := filepath.Join(dir, SpecFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := decodeStrict(b, &r); err != nil {
		return r, fmt.Errorf("%s: not a run description: %w", path, err)
	}
	if r.TTL <= 0 || len(r.Checkers) == 0 {
		return r, fmt.Errorf("%s: a run description needs a ttl > 0 and its checkers", path)
	}
	return r, nil
}
