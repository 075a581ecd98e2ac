// Package locks holds every lock algorithm deadbolt tests, behind one
// interface and selected by name. A lock is built by its Factory from the
// connection targets (endpoints.Endpoints) and opens its own connections,
// with whatever client library it is written for; the built-in ones use
// go-redis clients, one per master group (Options.Clients).
package locks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/internal/suggest"
)

// Lease is what a successful acquire returns.
type Lease struct {
	Key string
	// Token identifies this owner; release checks it.
	Token string
	// Fence is the fencing token, 0 when the lock has none.
	Fence int64
	// Seq is the grant's place in a fair lock's queue order, 0 otherwise.
	Seq int64
	TTL time.Duration
	// Deadline is the client-side validity deadline: acquire invoke time +
	// TTL - drift. Past it the holder must assume the lock is gone. A lock
	// with a watchdog moves it on each renewal.
	Deadline time.Time
	// Lost, when not nil, is closed as soon as the holder learns the lock is
	// gone (a renewal found it taken, or the deadline passed unrenewed).
	// Locks that cannot tell leave it nil.
	Lost <-chan struct{}
}

// Lock is one lock algorithm bound to one client's connections.
type Lock interface {
	// Acquire returns ErrNotAcquired when the lock certainly was not taken,
	// and any other error when the outcome is unknown.
	Acquire(ctx context.Context, key string) (*Lease, error)
	// Release returns ErrNotHeld when the lock was no longer ours, and any
	// other error when the outcome is unknown.
	Release(ctx context.Context, l *Lease) error
}

var (
	ErrNotAcquired = errors.New("lock not acquired")
	ErrNotHeld     = errors.New("lock was no longer held")
	// ErrNoEffect marks a call that certainly never reached Redis.
	ErrNoEffect = errors.New("request never reached Redis")
	// ErrUndone marks a failed acquire that took the key on some node and
	// gave it back before answering (simple-wait's rollback, RedLock's
	// minority): not a refusal, since for a while the key was its own.
	ErrUndone = errors.New("taken and given back")
)

// Options tune a lock. Zero fields take defaults.
type Options struct {
	TTL time.Duration
	// DriftFactor and DriftFloor give the clock drift allowance subtracted
	// from the validity: TTL*DriftFactor + DriftFloor, as in Redlock.
	DriftFactor float64
	DriftFloor  time.Duration
	// Timeout bounds every Redis call.
	Timeout time.Duration
	// Retries is how many more attempts Acquire makes after a refusal,
	// each after a random delay up to RetryDelay.
	Retries    int
	RetryDelay time.Duration
	// Wait is how long Acquire may wait for a holder to let go before it
	// gives up: locks with a wakeup wait for it, the others poll every
	// RetryDelay at most. 0 makes one attempt (plus Retries).
	Wait time.Duration
	// Events, when set, hears what a lock does on its own, such as
	// watchdog renewals, so that the history records it.
	Events Events
	// At, when set, is called at the named points a lock declares inside
	// its operations (the windows the broken variants leave open), so that
	// a harness can stop or crash a client exactly there. A non-nil error
	// aborts the call there, as a crash would; its outcome is unknown.
	At func(ctx context.Context, point, key string) error
	// Conn is how the lock's connections are set up (timeouts, pool, how a
	// Sentinel group's master is found); WithDefaults raises its timeouts
	// to at least Timeout. A lock on another client library maps what it
	// can and refuses what it cannot (its factory returns an error).
	Conn endpoints.ClientOptions
	// Knobs are the library's own settings the user gave (go-redis's
	// max_retries, redsync's tries), by name, for a lock that declares
	// knobs (RegisterKnobs); any other lock refuses them.
	Knobs map[string]string
	// Settings are every knob's value for the factory: New resolves them
	// from Knobs, the knobs' defaults, and the options above that the
	// caller gave (Knob.From), before any default of deadbolt's fills those.
	Settings Settings
}

// Point calls o.At, if set, at a named point.
func (o Options) Point(ctx context.Context, point, key string) error {
	if o.At == nil {
		return nil
	}
	return o.At(ctx, point, key)
}

// Events receives the work a lock does outside Acquire and Release calls.
// Implementations must be safe for concurrent use.
type Events interface {
	// Renewing is called before a renewal of l is sent.
	Renewing(l *Lease)
	// Renewed is called after it: err nil means l.Deadline has moved;
	// errors are classified like Release errors (Failed or unknown).
	Renewed(l *Lease, err error)
}

// WithDefaults fills unset options.
func (o Options) WithDefaults() Options {
	if o.TTL == 0 {
		o.TTL = 5 * time.Second
	}
	if o.DriftFactor == 0 {
		o.DriftFactor = 0.01
	}
	if o.DriftFloor == 0 {
		o.DriftFloor = 2 * time.Millisecond
	}
	if o.Timeout == 0 {
		o.Timeout = 500 * time.Millisecond
	}
	if o.RetryDelay == 0 {
		o.RetryDelay = 50 * time.Millisecond
	}
	o.Conn = o.Conn.WithDefaults(o.Timeout)
	return o
}

func (o Options) drift() time.Duration {
	return time.Duration(float64(o.TTL)*o.DriftFactor) + o.DriftFloor
}

// deadline is the validity deadline of a lease whose acquire started at start.
func (o Options) deadline(start time.Time) time.Time { return start.Add(o.TTL - o.drift()) }

// Deadline is the same validity deadline, for locks outside this package
// (broken variants, adapters).
func (o Options) Deadline(start time.Time) time.Time { return o.deadline(start) }

// Retry runs try until it takes the lock, fails for another reason than a
// refusal, or both the Retries and the Wait are spent, sleeping a random
// delay up to RetryDelay after each refusal.
func (o Options) Retry(ctx context.Context, try func() (*Lease, error)) (*Lease, error) {
	giveUp := time.Now().Add(o.Wait)
	for attempt := 0; ; attempt++ {
		NoteTry(ctx)
		l, err := try()
		if !errors.Is(err, ErrNotAcquired) || (attempt >= o.Retries && !time.Now().Before(giveUp)) {
			return l, err
		}
		if err := sleep(ctx, mrand.N(o.RetryDelay)); err != nil {
			// Every attempt so far was refused: certainly not acquired.
			return nil, errors.Join(ErrNotAcquired, err)
		}
	}
}

// Factory builds a lock over the connection targets e with the options o
// (defaults filled). The lock opens its own connections, with any client
// library: go-redis through Options.Clients, any other through e.Dialer.
// A factory must do no I/O: it checks that it can run over e (how many
// master groups, which topology) and connects when a call first needs a
// node, because Fits and Declare build locks over endpoints that are never
// dialled, and a client process opens its lock while nodes may be down. A
// lock that opened connections implements io.Closer (see Close).
type Factory func(e endpoints.Endpoints, o Options) (Lock, error)

type entry struct {
	name, summary string
	f             Factory
	points        []string
	reentrant     bool
	fencing       bool
	knobs         Knobs
}

var registry = map[string]entry{}

// Register makes a lock selectable by name; lock files call it from init.
// points are the named points where the lock calls Options.At.
func Register(name, summary string, f Factory, points ...string) {
	if _, dup := registry[name]; dup {
		panic("locks: duplicate lock " + name)
	}
	registry[name] = entry{name: name, summary: summary, f: f, points: points}
}

// RegisterReentrant is Register for a lock whose holder may acquire a key
// it holds again (Redisson's locks): each acquire is one more hold of the
// same owner, and the key is free after as many releases. The checkers
// judge such a lock's re-entries as one hold (see Reentrant).
func RegisterReentrant(name, summary string, f Factory, points ...string) {
	Register(name, summary, f, points...)
	e := registry[name]
	e.reentrant = true
	registry[name] = e
}

// RegisterFencing is Register for a lock whose grants carry a fencing
// token (Lease.Fence): a resource guarded by it can refuse a stale holder,
// so the matrix and the audit judge it with the register that checks the
// tokens (the fenced workload) where they would run the plain counter.
func RegisterFencing(name, summary string, f Factory, points ...string) {
	Register(name, summary, f, points...)
	e := registry[name]
	e.fencing = true
	registry[name] = e
}

// RegisterKnobs declares the knobs of a registered lock: the library's
// own settings, with its defaults (see Knob). Its factory reads their
// values from Options.Settings. A bad declaration panics.
func RegisterKnobs(name string, ks Knobs) {
	e, ok := registry[name]
	if !ok {
		panic("locks: RegisterKnobs: unknown lock " + name)
	}
	if err := ks.Check(); err != nil {
		panic("locks: RegisterKnobs " + name + ": " + err.Error())
	}
	e.knobs = ks
	registry[name] = e
}

// KnobsOf are the knobs a registered lock declares.
func KnobsOf(name string) Knobs { return registry[name].knobs }

// Fencing reports a lock registered with RegisterFencing.
func Fencing(name string) bool { return registry[name].fencing }

// Reentrant reports a lock registered with RegisterReentrant.
func Reentrant(name string) bool { return registry[name].reentrant }

// Points lists the named points a registered lock stops at (see Options.At).
func Points(name string) []string { return registry[name].points }

// HasPoint checks that the named lock declares point, with the points it
// has in the error when it does not.
func HasPoint(name, point string) error {
	if err := Lookup(name); err != nil {
		return err
	}
	for _, p := range registry[name].points {
		if p == point {
			return nil
		}
	}
	have := "none"
	if ps := registry[name].points; len(ps) > 0 {
		have = strings.Join(ps, ", ")
	}
	return fmt.Errorf("lock %s has no point %q (its points: %s)", name, point, have)
}

// Lookup checks that a lock of this name exists, with the known names in
// the error when it does not.
func Lookup(name string) error {
	if _, ok := registry[name]; !ok {
		return fmt.Errorf("unknown lock %q (known: %s)%s", name, strings.Join(Names(), ", "), suggest.Hint(name, Names()))
	}
	return nil
}

// Fits checks, without connecting, that the named lock can run over this
// many master groups. Factories check their endpoints and do no I/O, so
// building the lock over endpoints that are never dialled tells.
func Fits(name string, groups int) error {
	l, err := New(name, endpoints.Unreachable(groups), Options{})
	if err != nil {
		if NotSent(err) {
			return fmt.Errorf("lock %s dialled while it was built (a factory must do no I/O: connect when a call first needs a node): %w", name, err)
		}
		return err
	}
	return Close(l)
}

// RunsOn checks, without connecting, that the named lock runs on the
// topology (one master group of it; Fits checks the count).
func RunsOn(name, topology string) error {
	l, err := New(name, endpoints.UnreachableOn(topology), Options{})
	if err != nil {
		return err
	}
	defer Close(l)
	if w, ok := l.(ReplicaWaiter); ok && topology == endpoints.Independent {
		// No grant could ever be acknowledged: every run would be idle.
		return fmt.Errorf("lock %s grants only once %d replica(s) acknowledge, and the %s topology's masters have none", name, w.WaitsForReplicas(), topology)
	}
	return nil
}

// ReplicaWaiter is a lock that counts a grant only once replicas have it
// (WAIT): it cannot be granted by a master without replicas.
type ReplicaWaiter interface{ WaitsForReplicas() int }

// IndependentMasters refuses the cluster topology to a lock that spreads
// one key over several masters (RedLock and its kin): on one Redis Cluster
// a key lives on its slot's master alone, and every other master answers
// MOVED, so such a lock over a cluster's masters is a single-master lock
// with extra steps. Its honest setup is independent masters (or one
// single-shard cluster per lock server).
func IndependentMasters(name string, e endpoints.Endpoints) error {
	if e.Topology == endpoints.Cluster {
		return fmt.Errorf("lock %s needs independent masters: on one Redis Cluster a key lives only on its slot's master "+
			"(the others answer MOVED), so %s over a cluster's masters would be one master's lock; run it on the independent topology", name, name)
	}
	return nil
}

// New builds the named lock over e. o holds what the caller gave, before
// deadbolt's defaults: a knob whose library default stands unless the
// caller gave the option it takes its value from (Knob.From) must see
// that option unset.
func New(name string, e endpoints.Endpoints, o Options) (Lock, error) {
	if err := Lookup(name); err != nil {
		return nil, err
	}
	s, err := registry[name].knobs.Resolve(o.Knobs, o)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	o.Settings = s
	return registry[name].f(e, o.WithDefaults())
}

// Close closes what l opened (its connections), if it implements
// io.Closer: a lock opens its own connections, so whoever built it closes it.
func Close(l Lock) error {
	if c, ok := l.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Clients opens the go-redis clients of a lock over e, one per master
// group, with o.Conn (see endpoints.Endpoints.Clients). Nothing is dialled
// before the first command; the lock closes them.
func (o Options) Clients(e endpoints.Endpoints) ([]redis.UniversalClient, error) {
	return e.Clients(o.WithDefaults().Conn)
}

// OneClient is the go-redis client of a lock that runs over a single
// master group, or an error naming the lock when e has another count.
func OneClient(name string, e endpoints.Endpoints, o Options) (redis.UniversalClient, error) {
	if n := e.Groups(); n != 1 {
		return nil, fmt.Errorf("lock %s needs one master group, the topology has %d", name, n)
	}
	clients, err := o.Clients(e)
	if err != nil {
		return nil, err
	}
	return clients[0], nil
}

// closeAll closes go-redis clients, for the locks' Close methods.
func closeAll(clients ...redis.UniversalClient) error {
	var errs []error
	for _, c := range clients {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// Names lists the registered locks, sorted.
func Names() []string {
	var out []string
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Summary is the one-line description of a registered lock.
func Summary(name string) string { return registry[name].summary }

func newToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// tried is an acquire's error that says which token the acquire tried to
// set, so that the harness can look for it after a refusal.
type tried struct {
	err   error
	token string
}

func (t tried) Error() string { return t.err.Error() }
func (t tried) Unwrap() error { return t.err }

// WithToken marks an acquire's error with the token it tried to set.
func WithToken(err error, token string) error {
	if err == nil || token == "" {
		return err
	}
	return tried{err, token}
}

// TriedToken is the token an acquire's error says it tried, if it says.
func TriedToken(err error) string {
	var t tried
	if errors.As(err, &t) {
		return t.token
	}
	return ""
}
