package locks

import (
	"time"
)

// Behaviour is what a lock does as it is configured, derived from the
// client and the library it built (never written by hand per driver): how
// long its client waits for a reply, whether it sends a command again,
// how often it renews a lease, how long one call may take. The generator
// aims its faults by it, and the harness waits for a reply by it.
type Behaviour struct {
	// Client names the client library the lock sends its commands with,
	// and its version ("go-redis v9.23.0").
	Client string `json:"client,omitempty"`
	// CallTimeoutMS is how long the client waits for the reply to one
	// command before it gives up on it: -1 when it waits for ever, 0 when
	// the lock does not say.
	CallTimeoutMS int64 `json:"call_timeout_ms,omitempty"`
	// Retries is how many more times the client sends a command that
	// failed on the connection (a reset, an EOF), at most; -1 for as long
	// as the call's context lasts (rueidis).
	Retries int `json:"retries,omitempty"`
	// Resends: the client sends a command again when its reply did not
	// come within the call timeout (go-redis's default MaxRetries, redis-py
	// 6's default Retry), so a node's stall past the timeout decides a
	// lease as much as a grant does.
	Resends bool `json:"resends,omitempty"`
	// RenewEveryMS is how often a lock that renews its leases on its own
	// renews one (0: it does not, or does not say).
	RenewEveryMS int64 `json:"renew_every_ms,omitempty"`
	// LongestCallMS is the longest one call of the lock may take as it is
	// configured (its tries, each with its commands' timeouts and retries,
	// and the delays between them): -1 when nothing bounds it, 0 when the
	// lock does not say.
	LongestCallMS int64 `json:"longest_call_ms,omitempty"`
	// Settings are the lock's knobs whose values differ from the library's
	// defaults, "name=value": what a report shows of how it was run.
	Settings []string `json:"settings,omitempty"`
}

// Behaving is a lock that says how it behaves as configured: the library
// adapters, whose client and library decide it.
type Behaving interface {
	Behaviour() Behaviour
}

// Millis writes a duration as a Behaviour's milliseconds: -1 for no bound
// (a duration <= 0), at least 1 for any positive one.
func Millis(d time.Duration) int64 {
	if d <= 0 {
		return -1
	}
	return max(d.Milliseconds(), 1)
}

// CallTimeout is the call timeout as a duration; 0 for none or unsaid.
func (b Behaviour) CallTimeout() time.Duration {
	if b.CallTimeoutMS <= 0 {
		return 0
	}
	return time.Duration(b.CallTimeoutMS) * time.Millisecond
}

// LongestCall is the longest call as a duration, and whether one is
// known (false: unbounded or unsaid).
func (b Behaviour) LongestCall() (time.Duration, bool) {
	if b.LongestCallMS <= 0 {
		return 0, false
	}
	return time.Duration(b.LongestCallMS) * time.Millisecond, true
}

// behaviourOf is what l says of itself, or, for deadbolt's own locks (on
// deadbolt's go-redis clients, which never send a command again), the call
// timeout of o.
func behaviourOf(l Lock, o Options) Behaviour {
	if b, ok := l.(Behaving); ok {
		return b.Behaviour()
	}
	o = o.WithDefaults()
	b := Behaviour{CallTimeoutMS: Millis(o.Timeout)}
	if r, ok := l.(Resender); ok {
		b.Resends = r.ResendsTimedOut()
	}
	return b
}
