package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// SpecFile is the name of a run's full description in its directory.
const SpecFile = "scenario.json"

// RunSpec is scenario.json: everything a run was, written before it
// starts, so that a stored run can be re-checked (which checkers apply,
// the TTL) and re-run without the code that defined it. It is also the
// scenario file's schema (file.go).
type RunSpec struct {
	Scenario    string      `json:"scenario"`
	Description string      `json:"description"`
	Expect      Expectation `json:"expect"`
	Seed        uint64      `json:"seed"`
	Lock        string      `json:"lock"`
	// Mix are locks the last client slots opened instead of Lock.
	Mix         []LockMix          `json:"mix,omitempty"`
	LockOptions client.LockOptions `json:"lock_options"`
	Cluster     cluster.Spec       `json:"cluster"`
	Workload    string             `json:"workload"`
	Checkers    []string           `json:"checkers"`
	// Reentrant: the lock lets a holder re-enter a key it holds, and the
	// checkers judge a client's holds of one key as one.
	Reentrant bool `json:"reentrant,omitempty"`
	// Reenter: the clients re-entered the keys they held (nested acquires).
	Reenter bool `json:"reenter,omitempty"`
	// Queue: the run judges the order of the lock's queue of waiters.
	Queue bool `json:"queue,omitempty"`
	// Fence: the run judges fencing tokens at the resource.
	Fence     bool           `json:"fence,omitempty"`
	Nemesis   string         `json:"nemesis"`
	Fault     nemesis.Params `json:"fault"`
	Clients   int            `json:"clients"`
	Keys      []string       `json:"keys,omitempty"`
	TTLMS     int64          `json:"ttl_ms"`
	HoldMinMS int64          `json:"hold_min_ms"`
	HoldMaxMS int64          `json:"hold_max_ms"`
	PauseMS   int64          `json:"pause_ms"`
	TimeMS    int64          `json:"time_ms"`
	// SettleMS is how long the workload ran on after the cluster converged.
	SettleMS int64 `json:"settle_ms,omitempty"`
	// RunOnMS bounds how long the workload ran on past its settle while
	// it had fewer ok acquires than min_acquires (default: time_ms).
	RunOnMS int64 `json:"run_on_ms,omitempty"`
	// Precondition is what had to hold when the decisive fault struck.
	Precondition string `json:"precondition,omitempty"`
	MinAcquires  int    `json:"min_acquires"`
	// Driver is the command that ran each client.
	Driver []string `json:"driver"`
	// DriverName is the shipped driver (package drivers) that runs every
	// client; absent: deadbolt's own client, or the Driver command.
	DriverName string `json:"driver_name,omitempty"`
	// CI marks the scenarios of the CI suite.
	CI bool `json:"ci,omitempty"`
	// Upstream is where the library's tracker records a finding's bug.
	Upstream string `json:"upstream,omitempty"`
	// Target is the existing deployment the run went against (--target),
	// its password redacted; absent when deadbolt started the cluster.
	Target *endpoints.Endpoints `json:"target,omitempty"`
}

// TTL is the configured lease time.
func (r RunSpec) TTL() time.Duration { return time.Duration(r.TTLMS) * time.Millisecond }

func writeSpec(dir string, r RunSpec) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, SpecFile), append(b, '\n'), 0o644)
}

// ReadSpec reads a run directory's scenario.json.
func ReadSpec(dir string) (RunSpec, error) {
	var r RunSpec
	b, err := os.ReadFile(filepath.Join(dir, SpecFile))
	if err != nil {
		return r, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("%s: not a run description: %w", filepath.Join(dir, SpecFile), err)
	}
	if r.TTLMS <= 0 || len(r.Checkers) == 0 {
		return r, fmt.Errorf("%s: a run description needs ttl_ms > 0 and its checkers", filepath.Join(dir, SpecFile))
	}
	return r, nil
}
