// Package client runs lock users as OS processes. The harness (Process,
// Start) talks to each one over a JSON-lines protocol on its stdin and
// stdout, documented in docs/driver-protocol.md; Serve is the Go driver
// behind `deadbolt-client`. Because a client is a whole process, a pause is
// a real SIGSTOP and a crash a real SIGKILL, the lock's own timers included.
package client

import (
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// ProtocolVersion is the version a driver announces in its hello.
const ProtocolVersion = 1

// Request ops.
const (
	OpOpen     = "open"
	OpAcquire  = "acquire"
	OpRelease  = "release"
	OpResource = "resource"
	// OpExtend and OpReacquire are the calls a holder makes on a lease it
	// holds (locks.CallExtend, locks.CallReacquire): ok when the lock says
	// the lease goes on, fail when it says it does not, info when unknown.
	OpExtend    = "extend"
	OpReacquire = "reacquire"
	// OpDeclare asks for a lock's declaration as it runs with the options
	// given (its lock_info): what a lock that takes knobs (lock_info's
	// options) does as configured, before any container starts.
	OpDeclare = "declare"
)

// Outcomes of a reply, as in the history: ok took effect, fail certainly
// did not, info is unknown.
const (
	OutcomeOK   = "ok"
	OutcomeFail = "fail"
	OutcomeInfo = "info"
)

// Event kinds a driver writes on its own.
const (
	EventHello   = "hello"
	EventRenew   = "renew"
	EventLost    = "lost"
	EventStopped = "stopped"
	EventError   = "error"
)

// Request is one line from the harness. Every request has an id and an op;
// the other fields belong to particular ops.
type Request struct {
	ID int64  `json:"id"`
	Op string `json:"op"`
	// Arm names a point inside the lock where the driver must stop itself
	// (raise SIGSTOP) the next time it gets there. It may ride on any
	// request and stays armed until reached.
	Arm string `json:"arm,omitempty"`

	// open (and declare: lock, ttl_ms and options)
	Lock      string               `json:"lock,omitempty"`
	TTLMS     int64                `json:"ttl_ms,omitempty"`
	Options   *LockOptions         `json:"options,omitempty"`
	Endpoints *endpoints.Endpoints `json:"endpoints,omitempty"`

	// acquire, release, extend and reacquire (these three name the lease)
	Key   string `json:"key,omitempty"`
	Lease string `json:"lease,omitempty"`

	// resource
	Command []any `json:"command,omitempty"`
}

// LockOptions tune the lock a driver opens; zero fields take the lock's
// defaults.
type LockOptions struct {
	TimeoutMS    int64 `json:"timeout_ms,omitempty"`
	Retries      int   `json:"retries,omitempty"`
	RetryDelayMS int64 `json:"retry_delay_ms,omitempty"`
	WaitMS       int64 `json:"wait_ms,omitempty"`
	// Sentinel is how the lock's connections find a Sentinel group's
	// master: SentinelSwitch ("" too) follows Sentinel's announcements,
	// SentinelReconnect asks only when a connection is dialed.
	Sentinel string `json:"sentinel,omitempty"`
	// SlotRefreshMS is how often the lock's Redis Cluster client re-reads
	// the slot map on its own (0: the library's default).
	SlotRefreshMS int64 `json:"slot_refresh_ms,omitempty"`
	// Library are the library's own settings (the knobs its lock_info's
	// options declare), by name, each a string in the knob's kind
	// ("max_retries": "0", "read_timeout": "200ms"). A lock that declares
	// no knobs refuses any.
	Library map[string]string `json:"library,omitempty"`
}

// The values of LockOptions.Sentinel.
const (
	// SentinelSwitch: go-redis's failover client, which moves every
	// connection to a new master as soon as Sentinel announces it.
	SentinelSwitch = "switch"
	// SentinelReconnect: the master is asked for only when a connection
	// is dialed, as redis-py does; the old master keeps the pool until it
	// drops it or is demoted.
	SentinelReconnect = "reconnect"
)

// Reply answers the request with the same id.
type Reply struct {
	ID      int64  `json:"id"`
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	// Refused, on a failed extend, reacquire or release: the lock said the
	// lease was no longer the holder's (not that it could not tell). On a failed
	// acquire: the key was taken, as opposed to a
	// service the lock could not reach.
	Refused bool `json:"refused,omitempty"`

	// acquire ok: what the lock says about its lease. Recorded, never
	// trusted: the harness names and times leases itself.
	Token          string `json:"token,omitempty"`
	Fence          int64  `json:"fence,omitempty"`
	Seq            int64  `json:"seq,omitempty"`
	DeadlineMonoNS int64  `json:"deadline_mono_ns,omitempty"`
	// QueuedMonoNS, on any acquire's reply: when a lock that keeps waiters
	// in line first said this acquire stood in its queue (CLOCK_MONOTONIC);
	// 0 when it never did. The harness judges the grant order by it.
	QueuedMonoNS int64 `json:"queued_mono_ns,omitempty"`
	// TryBeganMonoNS, on an ok acquire of a lock that tries more than once
	// within one acquire: when the try that took the key began, before it
	// sent its first command (CLOCK_MONOTONIC). The harness counts the
	// lease from then; absent, from the call's start.
	TryBeganMonoNS int64 `json:"try_began_mono_ns,omitempty"`

	// resource ok: the Redis reply as JSON (integers, strings, null, arrays).
	Reply any `json:"reply,omitempty"`

	// declare ok: the lock's declaration as it runs with those options.
	LockInfo *locks.Declaration `json:"lock_info,omitempty"`

	// TTLMS, on an ok acquire, extend or reacquire: the lease time the lock
	// set when it is not the one open asked for (go-zero adds 500 ms and
	// rounds to seconds); absent: that one.
	TTLMS int64 `json:"ttl_ms,omitempty"`

	// BeganMonoNS, on any reply, is the driver's CLOCK_MONOTONIC reading
	// when it began the call: a request written to a stopped driver waits
	// there, and the lock's commands leave only after this.
	BeganMonoNS int64 `json:"began_mono_ns,omitempty"`
	// EndedMonoNS is its reading when the lock's call returned, before the
	// reply was written: how long the lock itself took, whatever the
	// harness's reading of the reply added.
	EndedMonoNS int64 `json:"ended_mono_ns,omitempty"`
}

// Event is a line a driver writes on its own, without a request.
type Event struct {
	Event string `json:"event"`
	// MonoNS is the driver's CLOCK_MONOTONIC reading when it happened.
	MonoNS int64 `json:"mono_ns"`

	// hello
	Protocol int      `json:"protocol,omitempty"`
	Driver   string   `json:"driver,omitempty"`
	PID      int      `json:"pid,omitempty"`
	Locks    []string `json:"locks,omitempty"`
	// LockInfo declares, per lock, what it needs and offers (optional).
	LockInfo map[string]locks.Declaration `json:"lock_info,omitempty"`

	// renew and lost
	Lease string `json:"lease,omitempty"`
	// Phase of a renewal: invoke before it is sent, then ok, fail or info.
	Phase          string `json:"phase,omitempty"`
	DeadlineMonoNS int64  `json:"deadline_mono_ns,omitempty"`
	// Refused, on a failed renewal: the lock found the lease no longer its
	// holder's.
	Refused bool `json:"refused,omitempty"`

	// stopped
	Point string `json:"point,omitempty"`
	Key   string `json:"key,omitempty"`

	// error (a protocol violation by the harness, before the driver exits)
	Error string `json:"error,omitempty"`
}

// PhaseInvoke is a renewal's first event.
const PhaseInvoke = "invoke"
