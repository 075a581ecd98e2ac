// Package history is the record of a run: every client operation as an
// invoke followed by ok, fail or info, and every nemesis action, with times
// taken from one monotonic clock of the harness. Checkers read only this.
package history

import "fmt"

// Type is the phase of an operation, as in Jepsen.
type Type string

const (
	Invoke Type = "invoke"
	// OK: the operation took effect.
	OK Type = "ok"
	// Fail: the operation certainly did not take effect.
	Fail Type = "fail"
	// Info: the outcome is unknown; it may take effect at any later time.
	Info Type = "info"
)

// F is what an operation does.
type F string

const (
	Acquire F = "acquire"
	Release F = "release"
	Renew   F = "renew"
	// FaultStart and FaultEnd bracket a nemesis fault; Fault names it.
	FaultStart F = "fault-start"
	FaultEnd   F = "fault-end"
)

// NemesisProcess is the process id of every nemesis operation.
const NemesisProcess = -1

// Op is one line of history.jsonl. Times are nanoseconds since the run
// started, read from the harness's monotonic clock.
type Op struct {
	Index   int    `json:"index"`
	Time    int64  `json:"time"`
	Type    Type   `json:"type"`
	Process int    `json:"process"`
	F       F      `json:"f"`
	Key     string `json:"key,omitempty"`
	// Owner is the lock token that identifies one lease.
	Owner string `json:"owner,omitempty"`
	// Fence is the fencing token of the lease, 0 when the lock has none.
	Fence int64 `json:"fence,omitempty"`
	// Seq is a fair lock's grant sequence number, 0 for other locks.
	Seq int64 `json:"seq,omitempty"`
	// TTL is the lease time requested, in nanoseconds.
	TTL int64 `json:"ttl,omitempty"`
	// Deadline is the client-side validity deadline of the lease (ok
	// acquires and renewals), on the same clock as Time.
	Deadline int64 `json:"deadline,omitempty"`
	// Fault and Node describe nemesis operations.
	Fault string `json:"fault,omitempty"`
	Node  string `json:"node,omitempty"`
	Error string `json:"error,omitempty"`
}

// Completes reports whether t ends an operation.
func (t Type) Completes() bool { return t == OK || t == Fail || t == Info }

func (t Type) valid() bool { return t == Invoke || t.Completes() }

func (f F) valid() bool {
	switch f {
	case Acquire, Release, Renew, FaultStart, FaultEnd:
		return true
	}
	return false
}

// Validate checks the fields a checker relies on.
func (o Op) Validate() error {
	if !o.Type.valid() {
		return fmt.Errorf("unknown type %q", o.Type)
	}
	if !o.F.valid() {
		return fmt.Errorf("unknown f %q", o.F)
	}
	if o.Time < 0 {
		return fmt.Errorf("negative time %d", o.Time)
	}
	nemesis := o.F == FaultStart || o.F == FaultEnd
	if nemesis != (o.Process == NemesisProcess) {
		return fmt.Errorf("f %q on process %d", o.F, o.Process)
	}
	if !nemesis && o.Key == "" {
		return fmt.Errorf("%s without a key", o.F)
	}
	if nemesis && o.Fault == "" {
		return fmt.Errorf("%s without a fault name", o.F)
	}
	return nil
}
