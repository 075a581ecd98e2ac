// Package workloads drives locks the way applications do, each client a
// process of its own, and records every operation in the history: on the
// lock, and on the resource the lock protects, so that a run shows what a
// double hold cost the data. A workload is one file: what a client locks
// next and what it does while it holds the lock, plus the resource's setup
// and final read, registered with the checkers that judge it.
package workloads

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/internal/suggest"
)

// Workload is what clients do with the lock.
type Workload interface {
	// Setup prepares the resource before any client starts and records
	// what it wrote, so that a checker knows the starting point.
	Setup(ctx context.Context, h *Harness) error
	// Next is the key a client locks next.
	Next(s *Session) string
	// Critical is what a client does while it holds l. It returns early
	// when the session is stopping or the lock reports l lost.
	Critical(ctx context.Context, s *Session, l *Lease)
	// Final reads the resource after every client stopped and records it.
	Final(ctx context.Context, h *Harness) error
}

// Config is a run's shape and wiring, the same for every workload.
type Config struct {
	Shape
	Seed uint64

	// Lock and LockOptions are what every client opens.
	Lock        string
	LockOptions client.LockOptions
	Endpoints   endpoints.Endpoints
	// SlotEndpoints, when set, is how client slot n reaches the lock
	// service (its own links, for link faults); else Endpoints.
	SlotEndpoints func(slot int) (endpoints.Endpoints, error)
	// Driver starts one client process.
	Driver client.Command
	// Mix are other locks the last client slots open, each with its own
	// driver (mix.go).
	Mix []Mixed
	// ReplyTimeout bounds each request to a client (time it spends paused
	// excluded); 0: the lock's longest call (LongestCall) plus 2 s, no
	// less than the longer of 5 s and two TTLs, and no more than
	// MaxReplyWait.
	ReplyTimeout time.Duration
	// LongestCall is the longest one call of the lock may take as it is
	// configured, as the lock declares it (locks.Behaviour): -1 when
	// nothing bounds it, 0 when it does not say.
	LongestCall time.Duration
	// LogDir receives each client process's log as p<N>.log; "" discards.
	LogDir string
	// Reenter makes clients acquire a key they hold again, nested, half
	// of the time (reenter.go).
	Reenter bool
	// Inspect, when set, reads key on every node of the lock service: each
	// node's value (nodes without the key, or whose value is not a string,
	// left out), and the error of each node that did not answer. The
	// harness reads a key after an acquire the lock refused that said
	// which token it tried (inspect.go).
	Inspect func(ctx context.Context, key string) (values map[string]string, unanswered map[string]error)
	Rec     *history.Recorder
}

// MaxReplyWait is the longest the harness waits for a client's reply,
// whatever the lock declares: a call that takes longer (a library that
// waits for a stalled node for ever, as redis-py does by default) is
// recorded unknown and its client replaced, so that one hung call cannot
// hold a run past its time.
const MaxReplyWait = time.Minute

// replyTimeout is how long a running client may take to answer: as long
// as its lock says a call may take, and 2 s more, within bounds.
func (c Config) replyTimeout() time.Duration {
	if c.ReplyTimeout > 0 {
		return c.ReplyTimeout
	}
	d := max(5*time.Second, 2*c.TTL.D())
	switch {
	case c.LongestCall < 0:
		d = MaxReplyWait
	case c.LongestCall > 0:
		d = max(d, c.LongestCall+2*time.Second)
	}
	return min(d, MaxReplyWait)
}

// Validate checks the shape before anything starts.
func (c Config) Validate() error {
	switch {
	case c.Clients < 1:
		return fmt.Errorf("a workload needs at least one client, got %d", c.Clients)
	case c.TTL <= 0:
		return fmt.Errorf("a workload needs a TTL > 0, got %s", c.TTL)
	case c.HoldMin < 0 || c.HoldMax < c.HoldMin || c.Pause < 0:
		return fmt.Errorf("hold times need 0 <= min <= max and a pause >= 0 (got %s, %s, %s)", c.HoldMin, c.HoldMax, c.Pause)
	}
	return c.validateMix()
}

// Kind is a registered workload.
type Kind struct {
	Name    string
	Summary string
	// Checkers are the workload's own checkers (see checker.Names); its
	// runs have more (Judges).
	Checkers []string
	// Resource says it needs the cluster's resource node.
	Resource bool
	// NeedsKeys says it locks Config.Keys, which must not be empty.
	NeedsKeys bool
	// Calls are the calls on a held lease the clients make (locks.CallExtend,
	// locks.CallReacquire): the lock must offer each.
	Calls []string
	// FencedAs is the workload that guards the same resource with the
	// lease's fencing tokens: the matrix runs it in this one's place for a
	// lock that hands tokens out ("": none).
	FencedAs string
	New      func(Config) Workload
}

var registry = map[string]Kind{}

// Register makes a workload selectable by name (a scenario's "workload");
// workload files call it from init. It panics on a kind no run could use.
func Register(k Kind) {
	if err := k.check(); err != nil {
		panic("workloads: " + k.Name + ": " + err.Error())
	}
	registry[k.Name] = k
}

func (k Kind) check() error {
	if _, dup := registry[k.Name]; dup {
		return fmt.Errorf("registered twice")
	}
	if k.Name == "" || k.Summary == "" || k.New == nil {
		return fmt.Errorf("a workload needs a name, a summary and New")
	}
	for _, c := range k.Checkers {
		if err := checker.Lookup(c); err != nil {
			return err
		}
	}
	return nil
}

// Get returns the named workload kind.
func Get(name string) (Kind, error) {
	k, ok := registry[name]
	if !ok {
		return Kind{}, fmt.Errorf("unknown workload %q (known: %s)%s", name, strings.Join(Names(), ", "), suggest.Hint(name, Names()))
	}
	return k, nil
}

// Names lists the workloads, sorted.
func Names() []string { return slices.Sorted(maps.Keys(registry)) }

// Judges are the checkers of the workload's runs: those of the lock
// service itself, its own, then those every workload runs (each once;
// resolved when asked, so that a checker registered later counts).
func (k Kind) Judges() []string {
	var all []string
	for _, c := range slices.Concat(checker.Scoped(checker.LockService), k.Checkers, checker.Scoped(checker.EveryWorkload)) {
		if !slices.Contains(all, c) {
			all = append(all, c)
		}
	}
	return all
}
