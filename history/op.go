// Package history is the record of a run: every client operation as an
// invoke followed by ok, fail or info, and every nemesis action, with times
// on one monotonic clock of the harness. Checkers read only this.
package history

import (
	"fmt"
	"slices"
)

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
	// Renew is a renewal of a held lease: the lock's own (a watchdog
	// inside the client, on a process of its own) or one the holder asked
	// for (Via names the call, on the client's process).
	Renew F = "renew"
	// Lost is the client's lock telling its holder the lease is gone.
	Lost F = "lost"
	// Read, Write and Order act on the resource the lock protects. Read's
	// ok carries Value; Write's invoke carries Value (and Fence when fenced)
	// and its ok Prev, the value it replaced; a failed Write was rejected.
	// Order buys one unit for the user of the lock key; fail: refused.
	Read  F = "read"
	Write F = "write"
	Order F = "order"
	// FaultStart and FaultEnd bracket a nemesis fault; Fault names it.
	FaultStart F = "fault-start"
	FaultEnd   F = "fault-end"
	// HealthBefore and HealthAfter are the nemesis's checks that the
	// cluster is healthy before its first fault (Fault names the schedule)
	// and after each heal that leaves no fault in effect (Fault, Node and
	// FaultID name the fault healed). A check that did not end ok leaves
	// the faults' effect in doubt.
	HealthBefore F = "health-before"
	HealthAfter  F = "health-after"
	// FaultMissed is a step of the nemesis that never struck: its moment
	// did not come before the fault phase ended (or an earlier step
	// failed). Always invoke then fail, with Error saying why and Node
	// naming the step; the run did not stage what it set out to. A step
	// that waited for a grant names its Key, and, when it waited under a
	// fault that struck, that fault's FaultID.
	FaultMissed F = "fault-missed"
	// PhaseF marks the start of a phase of the run (Phase names it), an
	// invoke and an ok at one instant.
	PhaseF F = "phase"
	// Failover is a master switch a Sentinel announced (+switch-master),
	// whatever caused it: Node is "OLD -> NEW" and Fault the Sentinel that
	// told the harness first. The checkers judge whether a fault staged it.
	// An invoke and an ok at one instant, like a phase mark.
	Failover F = "failover"
	// Inspect is the harness reading a lock key on the lock service's
	// nodes right after an acquire the lock refused that said which token
	// it tried (Lease names that acquire, Owner on the invoke its token):
	// the ok completion's Owner is that token when a node held it (Node
	// names the nodes), empty when none did; an info completion's Node
	// names the nodes that did not answer. On the harness's process.
	Inspect F = "inspect"
	// Tilt is a Sentinel entering (Node "entered") or leaving ("left") TILT
	// mode: its timer fired more than 2 s late (the process was starved),
	// and it acts on nothing for 30 s. Fault names the Sentinel.
	Tilt F = "tilt"
)

// The calls a holder makes on a lease it holds, recorded as renewals.
const (
	ViaExtend    = "extend"
	ViaReacquire = "reacquire"
)

// Phase is a stretch of a run, as the history marks it.
type Phase string

// The phases, in order. Setup (the cluster's start and the health check
// before the faults) precedes the first mark.
const (
	// PhaseFaults: the workload runs and the nemesis strikes.
	PhaseFaults Phase = "faults"
	// PhaseHeal: the heal that leaves no fault in effect is under way.
	PhaseHeal Phase = "heal"
	// PhaseConvergence: every fault is healed; the cluster has yet to
	// agree again (an old master demoted and following the new one, every
	// Sentinel naming one master).
	PhaseConvergence Phase = "convergence"
	// PhaseSettle: the cluster agrees; the workload runs on for a few TTLs,
	// so that damage landing at convergence is seen.
	PhaseSettle Phase = "settle"
	// PhaseEnd: the workload stops; clients finish and release.
	PhaseEnd Phase = "end"
)

// Phases lists the marks in order.
var Phases = []Phase{PhaseFaults, PhaseHeal, PhaseConvergence, PhaseSettle, PhaseEnd}

// Process ids that are not clients.
const (
	// NemesisProcess is the process id of every nemesis operation.
	NemesisProcess = -1
	// HarnessProcess sets up and finally reads the resource, outside any lock.
	HarnessProcess = -2
)

// StampClient marks an operation whose Time is the client's own
// CLOCK_MONOTONIC reading of an event inside it, placed on the harness's
// timeline. Such operations are recorded when their report arrives, so
// they may be a little out of time order in the file.
const StampClient = "client"

// Op is one line of history.jsonl. Times are nanoseconds since the run
// started, on the monotonic clock that every process on the host shares.
type Op struct {
	Index int   `json:"index"`
	Time  int64 `json:"time"`
	// Stamp is StampClient for client-stamped times, empty for the harness's.
	Stamp   string `json:"stamp,omitempty"`
	Type    Type   `json:"type"`
	Process int    `json:"process"`
	F       F      `json:"f"`
	Key     string `json:"key,omitempty"`
	// Lease is the harness's name for one grant: the acquiring process and
	// its sequence ("p3.2"). Checkers identify leases by it alone.
	Lease string `json:"lease,omitempty"`
	// Owner is the lock's own token for the lease: recorded, never trusted.
	Owner string `json:"owner,omitempty"`
	// Fence is the fencing token the lock reported, 0 when it has none.
	Fence int64 `json:"fence,omitempty"`
	// Seq is a fair lock's grant sequence number, 0 for other locks.
	Seq int64 `json:"seq,omitempty"`
	// TTL is the lease time the lock was configured with, in nanoseconds.
	TTL int64 `json:"ttl,omitempty"`
	// Deadline is the validity deadline the lock claimed (ok acquires and
	// renewals), on the history's clock: recorded and shown, never trusted.
	Deadline int64 `json:"deadline,omitempty"`
	// Queued, on an acquire's completion, is when the lock said that
	// acquire first stood in its queue of waiters (a fair lock), stamped by
	// the client on the history's clock; 0 when it never did.
	Queued int64 `json:"queued,omitempty"`
	// Refused marks a failed acquire the lock refused because the key was
	// taken, as opposed to one that could not reach the service; on a
	// failed renewal, the lock said the lease was no longer the holder's.
	Refused bool `json:"refused,omitempty"`
	// Via, on a renewal, is the call the holder made (ViaExtend,
	// ViaReacquire); empty for the lock's own watchdog renewals.
	Via string `json:"via,omitempty"`
	// Began, on a client operation's completion, is when the client began
	// it, by its own clock on the history's timeline (0: it did not say):
	// a request written to a stopped client waits there, and nothing it
	// does reaches Redis before this.
	Began int64 `json:"began,omitempty"`
	// Ended is when the client's call returned, by its own clock (0: it
	// did not say): Ended - Began is how long the lock took.
	Ended int64 `json:"ended,omitempty"`
	// Tried, on an ok acquire of a lock that tries more than once within
	// one acquire, is when the try that took the key began, by the client's
	// own clock (0: it did not say): the key was set after it, so the
	// lease runs from then, not from the call's start.
	Tried int64 `json:"tried,omitempty"`
	// Value and Prev are resource values (see Read, Write, Order).
	Value *int64 `json:"value,omitempty"`
	Prev  *int64 `json:"prev,omitempty"`
	// Fault and Node describe nemesis operations; FaultID names one fault
	// instance, so that two overlapping faults of one kind pair apart.
	Fault   string `json:"fault,omitempty"`
	FaultID string `json:"fault_id,omitempty"`
	Node    string `json:"node,omitempty"`
	// Target, on a fault-start, is the selector of what the fault struck,
	// made concrete (node:redis-3, client:1, link:0:redis-4,redis-5): a
	// plan step that names it strikes the same again (deadbolt shrink).
	Target string `json:"target,omitempty"`
	// Phase names the phase a phase mark starts.
	Phase Phase  `json:"phase,omitempty"`
	Error string `json:"error,omitempty"`
	// Next, on an info completion, is the process that continues the
	// client (it may release or use its leases): after an unknown outcome
	// the old operation may still take effect, so the client goes on under
	// a new id. 0: none (a successor's id is never 0).
	Next int `json:"next,omitempty"`
	// InOp, on the fault-start and fault-end of a fault struck inside a
	// client's operation, says which operation and how it landed.
	InOp *InOp `json:"in_op,omitempty"`
	// Effects, on a fault-start's invocation, say what the fault does, as
	// its declaration says (EffectsOf reads them).
	Effects *Effects `json:"effects,omitempty"`
	// By, on a fault-start, is the step's size in
	// nanoseconds (how long a delay holds each reply back), 0 when it has
	// none.
	By int64 `json:"by,omitempty"`
}

// InOp is a fault struck inside a client's operation with no help from
// its lock: the harness stopped or killed the client a delay after it
// wrote the request for Op, the acquire or release of the fault-start's
// Lease on its Key.
type InOp struct {
	Op F `json:"op"`
	// Kill: the client was killed, not stopped and resumed.
	Kill bool `json:"kill,omitempty"`
	// Delay is how long after the request's write the signal went: planned
	// on the fault-start's invocation, as sent on its completion.
	Delay int64 `json:"delay,omitempty"`
	// Latency is the client's recent latency for Op, which the planned
	// delay is drawn over.
	Latency int64 `json:"latency,omitempty"`
	// Inside, on the fault-end's completion, says the stop landed while the
	// request was outstanding: its reply had not been read when the client
	// stopped (or died), nor by its resume, with nothing it wrote unread.
	Inside bool `json:"inside,omitempty"`
}

// Int is a pointer to v, for Value and Prev.
func Int(v int64) *int64 { return &v }

// Completes reports whether t ends an operation.
func (t Type) Completes() bool { return t == OK || t == Fail || t == Info }

func (t Type) valid() bool { return t == Invoke || t.Completes() }

// IsLock reports operations on the lock service.
func (f F) IsLock() bool { return f == Acquire || f == Release || f == Renew || f == Lost }

// IsResource reports operations on the protected resource.
func (f F) IsResource() bool { return f == Read || f == Write || f == Order }

// IsNemesis reports the nemesis's operations: faults, missed faults,
// health checks, the marks of the run's phases and what Sentinel announced.
func (f F) IsNemesis() bool {
	return f == FaultStart || f == FaultEnd || f == HealthBefore || f == HealthAfter || f == FaultMissed || f == PhaseF || f.IsObserved()
}

// IsObserved reports what the harness saw the cluster do by itself
// (Failover, Tilt): recorded on the nemesis's process, but no step of it.
func (f F) IsObserved() bool { return f == Failover || f == Tilt }

// Validate checks the fields a checker relies on.
func (o *Op) Validate() error {
	if !o.Type.valid() {
		return fmt.Errorf("unknown type %q", o.Type)
	}
	if !o.F.IsLock() && !o.F.IsResource() && !o.F.IsNemesis() && o.F != Inspect {
		return fmt.Errorf("unknown f %q", o.F)
	}
	if o.Time < 0 {
		return fmt.Errorf("negative time %d", o.Time)
	}
	if o.Stamp != "" && o.Stamp != StampClient {
		return fmt.Errorf("unknown stamp %q", o.Stamp)
	}
	if o.TTL < 0 {
		return fmt.Errorf("negative ttl %d", o.TTL)
	}
	if o.Deadline < 0 {
		return fmt.Errorf("negative deadline %d", o.Deadline)
	}
	if o.Queued < 0 {
		return fmt.Errorf("negative queued time %d", o.Queued)
	}
	if o.Queued != 0 && (o.F != Acquire || !o.Type.Completes()) {
		return fmt.Errorf("a queued time on a %s %s: only an acquire's completion has one", o.F, o.Type)
	}
	if o.Next != 0 && (o.Type != Info || o.Process < 0 || o.Next <= o.Process) {
		return fmt.Errorf("next %d on a %s of process %d: only a client's info completion names its successor, a later process", o.Next, o.Type, o.Process)
	}
	if o.InOp != nil && (o.F != FaultStart && o.F != FaultEnd || o.InOp.Op != Acquire && o.InOp.Op != Release && o.InOp.Op != Renew || o.InOp.Delay < 0 || o.InOp.Latency < 0) {
		return fmt.Errorf("in_op %+v on a %s: only a fault's start or end struck inside an acquire, a release or a renewal has one", *o.InOp, o.F)
	}
	if o.Via != "" && (o.F != Renew || o.Via != ViaExtend && o.Via != ViaReacquire) {
		return fmt.Errorf("via %q on a %s: only a renewal the holder asked for has one (%s or %s)", o.Via, o.F, ViaExtend, ViaReacquire)
	}
	if o.Tried != 0 && (o.F != Acquire || o.Type != OK || o.Tried < o.Began || o.Ended != 0 && o.Tried > o.Ended) {
		return fmt.Errorf("tried %d on a %s %s (began %d, ended %d): only an ok acquire has one, within its call", o.Tried, o.F, o.Type, o.Began, o.Ended)
	}
	if o.Began < 0 || o.Ended < 0 || (o.Began != 0 || o.Ended != 0) && (!o.Type.Completes() || o.Process < 0 || o.Ended != 0 && o.Ended < o.Began) {
		return fmt.Errorf("began %d and ended %d on a %s of process %d: only a client's completion has them, ended after began", o.Began, o.Ended, o.Type, o.Process)
	}
	switch {
	case o.F.IsNemesis() != (o.Process == NemesisProcess):
		return fmt.Errorf("f %q on process %d", o.F, o.Process)
	case o.Process == HarnessProcess && !o.F.IsResource() && o.F != Inspect:
		return fmt.Errorf("f %q on the harness process", o.F)
	case o.Process < HarnessProcess:
		return fmt.Errorf("process %d: client processes are numbered from 0", o.Process)
	case o.F == PhaseF:
		if !slices.Contains(Phases, o.Phase) {
			return fmt.Errorf("phase mark of an unknown phase %q", o.Phase)
		}
		return nil
	case o.F.IsNemesis():
		if o.Fault == "" {
			return fmt.Errorf("%s without a fault name", o.F)
		}
		return nil
	case o.Key == "":
		return fmt.Errorf("%s without a key", o.F)
	case o.F.IsLock() && o.Lease == "":
		return fmt.Errorf("%s without a lease id: the harness names every grant", o.F)
	case o.F == Acquire && o.Type == OK && o.Owner == "":
		return fmt.Errorf("ok acquire without an owner: the lock's token of every grant is recorded")
	}
	return nil
}
