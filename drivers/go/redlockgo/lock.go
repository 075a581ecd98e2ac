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
)

// lock is one RedLock over every independent master, as an application
// has one. redlock-go dials by itself: it gets one connection string per
// master (the published address, the password, the call timeouts as
// DialTimeout, ReadTimeout and WriteTimeout), so it runs without TLS and
// authenticates with the password alone (the nodes' default user is the
// lock user). Everything else is go-redis's default, its 3 retries of a
// timed-out command included. Retries -> SetRetryCount(Retries+1),
// RetryDelay -> SetRetryDelay (its random delay, in whole milliseconds);
// Wait has no counterpart.
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
	tries   int // go-redis's tries of one command: its MaxRetries + 1

	mu   sync.Mutex
	sets map[string]*attempt // the SET NX answers of the acquire under way, by key
}

// attempt is what the masters answered to one acquire's SET NX commands.
type attempt struct {
	value              string
	taken, refused     int
	unsent, unanswered []error
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
	o = o.WithDefaults()
	var addrs []string
	for _, m := range e.Masters {
		addrs = append(addrs, connString(e.Addresses[m], e.Password, o.Conn))
	}
	ctx, stop := context.WithCancel(context.Background())
	rl, err := newRedLock(ctx, addrs)
	if err != nil {
		stop()
		return nil, fmt.Errorf("redlock-go: %w", err)
	}
	rl.SetRetryCount(o.Retries + 1)
	rl.SetRetryDelay(max(int(o.RetryDelay/time.Millisecond), 1))
	clients, err := clientsOf(rl)
	if err != nil {
		stop()
		return nil, err
	}
	l := &lock{rl: rl, clients: clients, stop: stop, o: o, tries: 1, sets: map[string]*attempt{}}
	for _, c := range clients {
		c.AddHook(hook{l})
		l.tries = c.Options().MaxRetries + 1
	}
	return l, nil
}

// connString is the connection string of one master, in the form
// redlock-go parses: its timeouts are nanoseconds.
func connString(addr, password string, c endpoints.ClientOptions) string {
	u := url.URL{Scheme: "tcp", Host: addr, Path: "/0", RawQuery: url.Values{
		"DialTimeout":  {strconv.FormatInt(int64(c.DialTimeout), 10)},
		"ReadTimeout":  {strconv.FormatInt(int64(c.ReadTimeout), 10)},
		"WriteTimeout": {strconv.FormatInt(int64(c.WriteTimeout), 10)},
	}.Encode()}
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

// ResendsTimedOut: go-redis sends a command that timed out again, its
// MaxRetries times by default (locks.Resender).
func (l *lock) ResendsTimedOut() bool { return l.tries > 1 }

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

func (hook) BeforeProcess(ctx context.Context, _ redis.Cmder) (context.Context, error) {
	return ctx, nil
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

// call bounds one command: go-redis's tries, each bounded by the call
// timeout, and its backoffs between them (at most 512 ms each).
func (l *lock) call() time.Duration {
	return time.Duration(l.tries) * (l.o.Timeout + 512*time.Millisecond)
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
	defer func() {
		l.mu.Lock()
		delete(l.sets, key)
		l.mu.Unlock()
	}()
	// Each try is a round of SETs and, short of a quorum, a round of
	// unlocks, each bounded by the TTL by the library itself.
	n := time.Duration(l.o.Retries)
	ctx, cancel := context.WithTimeout(ctx, (n+1)*(2*l.call()+l.o.RetryDelay))
	defer cancel()
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
	ctx, cancel := context.WithTimeout(ctx, l.call())
	defer cancel()
	if err := l.rl.UnLock(ctx, lease.Key); err != nil {
		return fmt.Errorf("redlock-go: %w", err)
	}
	return nil
}
