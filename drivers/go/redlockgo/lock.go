//go:build deadbolt_driver

package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/go-redis/redis/v8"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/locks/clients/goredis8"
)

// lock is one RedLock over every independent master, as an application has
// one. redlock-go dials by itself: it gets one connection string per master
// (the published address, the password), so it runs without TLS and
// authenticates with the password alone (the nodes' default user is the
// lock user). Everything else is the library's default unless a knob
// changes it: go-redis v8's (its 3 retries of a failed command included;
// the connection string sets its read, write and dial timeouts, and
// nothing else of go-redis), and redlock-go's 10 tries a random delay of
// up to 200 ms apart. Lock and UnLock get the context an application
// passes, one without a deadline (redlock-go bounds each try by the TTL).
//
// Lock says only "failed" whatever each master answered, and keeps the
// value it set to itself. So that a refusal is told from an outage, the
// adapter hooks the go-redis clients the RedLock built (read from its
// unexported fields: the library has no accessor) and sees each SET NX's
// answer and value, changing nothing. UnLock answers nil whatever the
// masters said (and without a call once the value it remembers has
// expired): the adapter reports what it says.
type lock struct {
	rl      *redLock
	clients []*redis.Client
	stop    context.CancelFunc
	o       locks.Options

	mu   sync.Mutex
	sets map[string]*attempt // the SET NX answers of the acquire under way, by key
	// rounds tells the tries of an acquire apart by its SET NX commands.
	rounds locks.Rounds
}

// attempt is what the masters answered to one acquire's SET NX commands.
type attempt struct {
	value              string
	taken, refused     int
	unsent, unanswered []error
}

// The knobs: what the connection string sets of go-redis, and redlock-go's
// own setters.
const (
	retryCount = "retry_count"
	retryDelay = "retry_delay"
)

func knobs() locks.Knobs {
	var ks locks.Knobs
	for _, k := range goredis8.Knobs() {
		if k.Name == goredis8.ReadTimeout || k.Name == goredis8.WriteTimeout || k.Name == goredis8.DialTimeout {
			k.Summary += " (in the connection string)"
			ks = append(ks, k)
		}
	}
	return append(ks,
		locks.Knob{Name: retryCount, Kind: locks.KnobInt, Default: "10", From: locks.FromTries,
			Summary: "redlock-go SetRetryCount: how many times one Lock tries for a quorum"},
		locks.Knob{Name: retryDelay, Kind: locks.KnobDuration, Default: "200ms", From: locks.FromRetryDelay,
			Summary: "redlock-go SetRetryDelay: the longest random wait between two tries (whole milliseconds)"})
}

func newLock(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	if err := locks.IndependentMasters("redlock-go", e); err != nil {
		return nil, err
	}
	if e.Topology != endpoints.Independent {
		return nil, fmt.Errorf("lock redlock-go runs on independent masters: it dials each address by itself (no Sentinel)")
	}
	if err := e.Check(); err != nil {
		return nil, err
	}
	if e.TLSCA != "" {
		return nil, fmt.Errorf("lock redlock-go cannot speak TLS: it builds its clients from tcp:// connection strings")
	}
	s := o.Settings
	ks := knobs()
	changed := func(name string) bool { k, _ := ks.Get(name); return s[name] != k.Default }
	var addrs []string
	for _, m := range e.Masters {
		addrs = append(addrs, connString(e.Addresses[m], e.Password, s, changed))
	}
	ctx, stop := context.WithCancel(context.Background())
	rl, err := newRedLock(ctx, addrs)
	if err != nil {
		stop()
		return nil, fmt.Errorf("redlock-go: %w", err)
	}
	if changed(retryCount) {
		rl.SetRetryCount(s.Int(retryCount))
	}
	if changed(retryDelay) {
		rl.SetRetryDelay(max(int(s.Duration(retryDelay)/time.Millisecond), 1))
	}
	clients, err := clientsOf(rl)
	if err != nil {
		stop()
		return nil, err
	}
	l := &lock{rl: rl, clients: clients, stop: stop, o: o, sets: map[string]*attempt{}}
	for _, c := range clients {
		c.AddHook(hook{l})
	}
	return l, nil
}

// connString is the connection string of one master, in the form
// redlock-go parses (its timeouts are nanoseconds), with the timeouts the
// user changed.
func connString(addr, password string, s locks.Settings, changed func(string) bool) string {
	q := url.Values{}
	for name, param := range map[string]string{goredis8.DialTimeout: "DialTimeout", goredis8.ReadTimeout: "ReadTimeout", goredis8.WriteTimeout: "WriteTimeout"} {
		if changed(name) {
			q.Set(param, strconv.FormatInt(int64(s.Duration(name)), 10))
		}
	}
	u := url.URL{Scheme: "tcp", Host: addr, Path: "/0", RawQuery: q.Encode()}
	if password != "" {
		u.User = url.UserPassword("", password)
	}
	return u.String()
}

// clientsOf reads the go-redis clients of rl (RedLock.clients, each
// RedClient's cli).
func clientsOf(rl *redLock) ([]*redis.Client, error) {
	bad := errors.New("redlock-go: this version's RedLock keeps no clients []*RedClient{cli *redis.Client} (the adapter watches their answers)")
	list := reflect.ValueOf(rl).Elem().FieldByName("clients")
	if !list.IsValid() || list.Kind() != reflect.Slice {
		return nil, bad
	}
	var out []*redis.Client
	for i := 0; i < list.Len(); i++ {
		rc := list.Index(i)
		if rc.Kind() != reflect.Pointer || rc.IsNil() {
			return nil, bad
		}
		f := rc.Elem().FieldByName("cli")
		if !f.IsValid() || !f.CanAddr() {
			return nil, bad
		}
		c, ok := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(*redis.Client)
		if !ok || c == nil {
			return nil, bad
		}
		out = append(out, c)
	}
	return out, nil
}

// Behaviour is the clients' (go-redis v8, as redlock-go built them), and
// the longest call: every try waiting its longest delay, its SET NX round
// and its unlock round each cut at the TTL (redlock-go's own bound on a
// try), or one UnLock, whose context has no deadline.
func (l *lock) Behaviour() locks.Behaviour {
	b := goredis8.Behaviour(l.clients[0])
	one, ok := goredis8.SendsOf(l.clients[0]).Longest()
	if !ok {
		b.LongestCallMS = -1
		return b
	}
	tries := time.Duration(l.o.Settings.Int(retryCount))
	acquire := tries * (2*min(one, l.o.TTL) + l.o.Settings.Duration(retryDelay))
	b.LongestCallMS = locks.Millis(max(acquire, one))
	return b
}

func (l *lock) Close() error {
	l.stop()
	var errs []error
	for _, c := range l.clients {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// hook hears each command's final answer (after go-redis's retries).
type hook struct{ l *lock }

func (h hook) BeforeProcess(ctx context.Context, cmd redis.Cmder) (context.Context, error) {
	h.l.rounds.Sent(ctx, isSetNX(cmd.Args()))
	return ctx, nil
}

// isSetNX reports a try's SET key value PX ms NX, as go-redis sends it.
func isSetNX(args []any) bool {
	if len(args) < 4 || fmt.Sprint(args[0]) != "set" {
		return false
	}
	return fmt.Sprint(args[len(args)-1]) == "nx"
}

func (h hook) AfterProcess(_ context.Context, cmd redis.Cmder) error {
	args := cmd.Args()
	if cmd.Name() != "set" || len(args) < 3 {
		return nil
	}
	key, _ := args[1].(string)
	h.l.mu.Lock()
	defer h.l.mu.Unlock()
	a := h.l.sets[key]
	if a == nil {
		return nil
	}
	a.value, _ = args[2].(string)
	b, _ := cmd.(*redis.BoolCmd)
	switch err := cmd.Err(); {
	case err == nil && b != nil && b.Val():
		a.taken++
	case err == nil:
		a.refused++
	case serverSaidNo(err) || locks.NotSent(err):
		a.unsent = append(a.unsent, err)
	default:
		a.unanswered = append(a.unanswered, err)
	}
	return nil
}

func (hook) BeforeProcessPipeline(ctx context.Context, _ []redis.Cmder) (context.Context, error) {
	return ctx, nil
}

func (hook) AfterProcessPipeline(context.Context, []redis.Cmder) error { return nil }

// serverSaidNo: an error reply (READONLY, LOADING, NOREPLICAS, NOPERM),
// the server's refusal to run the command.
func serverSaidNo(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && err != redis.Nil
}

func (l *lock) Acquire(ctx context.Context, key string) (*locks.Lease, error) {
	a := &attempt{}
	l.mu.Lock()
	if l.sets[key] != nil {
		l.mu.Unlock()
		return nil, fmt.Errorf("redlock-go: an acquire of %q is under way in this client", key)
	}
	l.sets[key] = a
	l.mu.Unlock()
	l.rounds.Reset()
	defer func() {
		l.mu.Lock()
		delete(l.sets, key)
		l.mu.Unlock()
	}()
	validity, err := lockKey(ctx, l.rl, key, l.o.TTL)
	got := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		return &locks.Lease{Key: key, Token: a.value, TTL: l.o.TTL, Deadline: got.Add(validity)}, nil
	}
	switch {
	case len(a.unanswered) > 0:
		// A SET may have taken effect, and the unlock after it too.
		return nil, locks.WithToken(fmt.Errorf("redlock-go: %w (masters: %w)", err, errors.Join(a.unanswered...)), a.value)
	case a.taken > 0:
		// Taken on a minority (or too late) and given back on every master.
		return nil, locks.WithToken(fmt.Errorf("%w: redlock-go: %w (%w)", locks.ErrNotAcquired, err, locks.ErrUndone), a.value)
	case len(a.unsent) > 0:
		return nil, locks.WithToken(errors.Join(locks.ErrNotAcquired, err, errors.Join(a.unsent...)), a.value)
	case a.refused > 0:
		// Every master answered every try: the key was taken.
		return nil, locks.WithToken(fmt.Errorf("%w: redlock-go: %w", locks.ErrNotAcquired, err), a.value)
	}
	return nil, fmt.Errorf("redlock-go: %w", err)
}

// Release is UnLock of the lease's key, which forgets it whatever comes.
func (l *lock) Release(ctx context.Context, lease *locks.Lease) error {
	if err := l.rl.UnLock(ctx, lease.Key); err != nil {
		return fmt.Errorf("redlock-go: %w", err)
	}
	return nil
}
