package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sys/unix"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// Serve is the Go driver (`deadbolt-client`): it says hello on out, then
// answers the requests read from in, one at a time, and writes events
// (renewals, losses, stops) as they happen, until in closes. Its log goes to
// logw. It returns the process's exit code: 0 at the end of input, 2 after a
// protocol violation by the harness. It offers every lock registered in
// package locks (the importer decides which: `deadbolt-client` imports
// locks/all).
func Serve(in io.Reader, out, logw io.Writer) int {
	info := map[string]locks.Declaration{}
	for _, n := range locks.Names() {
		info[n] = locks.Declare(n)
	}
	return serve(in, out, logw, "go", info)
}

// serve says hello with the locks of info, then serves requests as Serve.
func serve(in io.Reader, out, logw io.Writer, name string, info map[string]locks.Declaration) int {
	d := &driver{out: out, log: logw, info: info, leases: map[string]*held{}, ids: map[*locks.Lease]string{}}
	names := slices.Sorted(maps.Keys(info))
	d.emit(Event{Event: EventHello, Protocol: ProtocolVersion, Driver: name, PID: os.Getpid(), Locks: names, LockInfo: info})
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber() // resource arguments stay exact
		var req Request
		err := dec.Decode(&req)
		if err == nil {
			// One object per line: anything after it is not a request either.
			if _, after := dec.Token(); after != io.EOF {
				err = errors.New("more after the object")
			}
		}
		if err != nil || req.ID <= 0 {
			d.emit(Event{Event: EventError, Error: fmt.Sprintf("not a request (one JSON object with an id > 0): %q", line)})
			return 2
		}
		d.arm(req.Arm)
		began := history.MonoNow()
		r := d.handle(req)
		r.ID, r.BeganMonoNS, r.EndedMonoNS = req.ID, began, history.MonoNow()
		d.write(r)
	}
	d.close()
	return 0
}

type driver struct {
	wmu  sync.Mutex // whole lines on out, from any goroutine
	out  io.Writer
	log  io.Writer
	info map[string]locks.Declaration // the hello's

	lock     locks.Lock
	resource *redis.Client
	timeout  time.Duration
	ttl      time.Duration // what open asked for

	mu     sync.Mutex
	leases map[string]*held
	ids    map[*locks.Lease]string
	armed  string
}

type held struct {
	lease    *locks.Lease
	released chan struct{}
}

func (d *driver) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(Event{Event: EventError, Error: err.Error()})
	}
	d.wmu.Lock()
	defer d.wmu.Unlock()
	if _, err := d.out.Write(append(b, '\n')); err != nil {
		// The harness is gone: nothing is left to serve.
		os.Exit(0)
	}
}

func (d *driver) emit(ev Event) {
	if ev.MonoNS == 0 {
		ev.MonoNS = history.MonoNow()
	}
	d.write(ev)
}

func (d *driver) logf(format string, args ...any) {
	if d.log != nil {
		fmt.Fprintf(d.log, format+"\n", args...)
	}
}

func (d *driver) handle(req Request) Reply {
	if req.Op == OpDeclare {
		return d.declare(req)
	}
	if req.Op != OpOpen && d.lock == nil {
		return Reply{Outcome: OutcomeFail, Error: "no lock open: the first request must be open"}
	}
	switch req.Op {
	case OpOpen:
		return d.open(req)
	case OpAcquire:
		return d.acquire(req)
	case OpRelease:
		return d.release(req)
	case OpResource:
		return d.onResource(req)
	case OpExtend, OpReacquire:
		return d.onLease(req)
	}
	return Reply{Outcome: OutcomeFail, Error: fmt.Sprintf("unknown op %q", req.Op)}
}

func (d *driver) open(req Request) Reply {
	fail := func(format string, args ...any) Reply {
		return Reply{Outcome: OutcomeFail, Error: fmt.Sprintf(format, args...)}
	}
	switch {
	case d.lock != nil:
		return fail("a lock is already open")
	case req.Endpoints == nil:
		return fail("open needs endpoints")
	}
	o, err := lockOptions(req)
	if err != nil {
		return fail("%v", err)
	}
	if err := req.Endpoints.Check(); err != nil {
		return fail("%v", err)
	}
	o.Events, o.At = d, d.at
	// The lock opens its own connections over the endpoints, from the
	// options as given (a library's knobs keep its defaults where nothing
	// was given); the resource client gets the same settings (timeouts
	// raised to the lock's).
	l, err := locks.New(req.Lock, *req.Endpoints, o)
	if err != nil {
		return fail("%v", err)
	}
	o = o.WithDefaults()
	if req.Endpoints.Resource != "" {
		if d.resource, err = req.Endpoints.ResourceClient(o.Conn); err != nil {
			locks.Close(l)
			return fail("%v", err)
		}
	}
	d.lock, d.timeout, d.ttl = l, o.Timeout, o.TTL
	d.logf("opened %s over %d master group(s), ttl %dms", req.Lock, req.Endpoints.Groups(), req.TTLMS)
	return Reply{Outcome: OutcomeOK}
}

// lockOptions are the lock options of an open or declare request, as
// given: deadbolt's defaults are filled by the lock (locks.New), after a
// library's knobs have kept its own defaults where nothing was given.
func lockOptions(req Request) (locks.Options, error) {
	if req.TTLMS < 0 || req.TTLMS == 0 && req.Op == OpOpen {
		return locks.Options{}, fmt.Errorf("%s needs ttl_ms > 0, got %d", req.Op, req.TTLMS)
	}
	if err := locks.Lookup(req.Lock); err != nil {
		return locks.Options{}, err
	}
	o := locks.Options{TTL: time.Duration(req.TTLMS) * time.Millisecond}
	if lo := req.Options; lo != nil {
		o.Timeout = time.Duration(lo.TimeoutMS) * time.Millisecond
		o.Retries = lo.Retries
		o.RetryDelay = time.Duration(lo.RetryDelayMS) * time.Millisecond
		o.Wait = time.Duration(lo.WaitMS) * time.Millisecond
		o.Conn.SlotRefresh = time.Duration(lo.SlotRefreshMS) * time.Millisecond
		o.Knobs = lo.Library
		switch lo.Sentinel {
		case "", SentinelSwitch:
		case SentinelReconnect:
			o.Conn.SentinelOnDial = true
		default:
			return o, fmt.Errorf("unknown sentinel mode %q (known: %s, %s)", lo.Sentinel, SentinelSwitch, SentinelReconnect)
		}
	}
	return o, nil
}

// declare answers a lock's declaration as it runs with the request's
// options: its behaviour read off the lock built with them, over
// endpoints it never dials. An option it refuses fails the request.
func (d *driver) declare(req Request) Reply {
	o, err := lockOptions(req)
	if err != nil {
		return Reply{Outcome: OutcomeFail, Error: err.Error()}
	}
	info, err := locks.DeclareWith(req.Lock, o)
	if err != nil {
		return Reply{Outcome: OutcomeFail, Error: err.Error()}
	}
	hello := d.info[req.Lock]
	info.Library, info.Version, info.TLS = hello.Library, hello.Version, hello.TLS
	return Reply{Outcome: OutcomeOK, LockInfo: &info}
}

func (d *driver) acquire(req Request) Reply {
	if req.Key == "" || req.Lease == "" {
		return Reply{Outcome: OutcomeFail, Error: "acquire needs a key and a lease id"}
	}
	d.mu.Lock()
	_, dup := d.leases[req.Lease]
	d.mu.Unlock()
	if dup {
		return Reply{Outcome: OutcomeFail, Error: fmt.Sprintf("lease id %s is already taken", req.Lease)}
	}
	var queued, tried atomic.Int64
	ctx := locks.WithQueued(context.Background(), func() { queued.CompareAndSwap(0, history.MonoNow()) })
	ctx = locks.WithTried(ctx, func() { tried.Store(history.MonoNow()) })
	l, err := d.lock.Acquire(ctx, req.Key)
	if err != nil {
		r := outcome(err)
		r.Refused = locks.Refused(err)
		r.QueuedMonoNS = queued.Load()
		r.Token = locks.TriedToken(err) // what it tried to set, when the lock says
		return r
	}
	h := &held{lease: l, released: make(chan struct{})}
	d.mu.Lock()
	d.leases[req.Lease] = h
	if _, reentered := d.ids[l]; !reentered {
		// A re-entry returns the lease the client holds already; its
		// renewals keep the first id that still names it.
		d.ids[l] = req.Lease
	}
	d.mu.Unlock()
	if l.Lost != nil {
		go func() {
			select {
			case <-l.Lost:
				d.emit(Event{Event: EventLost, Lease: req.Lease})
			case <-h.released:
			}
		}()
	}
	return Reply{Outcome: OutcomeOK, Token: l.Token, Fence: l.Fence, Seq: l.Seq, DeadlineMonoNS: monoOf(l.Deadline), QueuedMonoNS: queued.Load(), TryBeganMonoNS: tried.Load(), TTLMS: d.ttlOf(l)}
}

func (d *driver) release(req Request) Reply {
	d.mu.Lock()
	h := d.leases[req.Lease]
	d.mu.Unlock()
	if h == nil {
		return Reply{Outcome: OutcomeFail, Error: fmt.Sprintf("no lease %q here", req.Lease)}
	}
	err := d.lock.Release(context.Background(), h.lease)
	// Whatever the outcome, the holder no longer counts on the lease.
	d.mu.Lock()
	delete(d.leases, req.Lease)
	if d.ids[h.lease] == req.Lease {
		delete(d.ids, h.lease)
		for id, other := range d.leases {
			if other.lease == h.lease {
				d.ids[h.lease] = id // the holds left of a re-entered lock
				break
			}
		}
	}
	d.mu.Unlock()
	close(h.released)
	r := outcome(err)
	r.Refused = errors.Is(err, locks.ErrNotHeld)
	return r
}

// onLease makes a call on a held lease: extend or reacquire, when the
// lock offers it. The driver keeps the lease whatever the outcome: the
// holder decides what a no means (a release still follows).
func (d *driver) onLease(req Request) Reply {
	d.mu.Lock()
	h := d.leases[req.Lease]
	d.mu.Unlock()
	if h == nil {
		return Reply{Outcome: OutcomeFail, Error: fmt.Sprintf("no lease %q here", req.Lease)}
	}
	var call func(context.Context, *locks.Lease) error
	if e, ok := d.lock.(locks.Extender); ok && req.Op == OpExtend {
		call = e.Extend
	}
	if r, ok := d.lock.(locks.Reacquirer); ok && req.Op == OpReacquire {
		call = r.Reacquire
	}
	if call == nil {
		return Reply{Outcome: OutcomeFail, Error: fmt.Sprintf("lock does not offer %s (its calls: %v)", req.Op, locks.CallsOf(d.lock))}
	}
	return d.leaseReply(call(context.Background(), h.lease), h.lease)
}

// leaseReply is an extend's or reacquire's reply: ok carries the lock's
// new deadline.
func (d *driver) leaseReply(err error, l *locks.Lease) Reply {
	r := outcome(err)
	r.Refused = errors.Is(err, locks.ErrNotHeld)
	if err == nil {
		r.DeadlineMonoNS, r.TTLMS = monoOf(l.Deadline), d.ttlOf(l)
	}
	return r
}

// ttlOf is the lease's TTL for a reply: 0 when it is the one asked for.
func (d *driver) ttlOf(l *locks.Lease) int64 {
	if l.TTL == 0 || l.TTL == d.ttl {
		return 0
	}
	return max(l.TTL.Milliseconds(), 1)
}

func (d *driver) onResource(req Request) Reply {
	if d.resource == nil {
		return Reply{Outcome: OutcomeFail, Error: "this run has no resource node"}
	}
	if len(req.Command) == 0 {
		return Reply{Outcome: OutcomeFail, Error: "resource needs a command"}
	}
	args := make([]any, len(req.Command))
	for i, a := range req.Command {
		switch v := a.(type) {
		case string:
			args[i] = v
		case json.Number:
			args[i] = v.String()
		default:
			return Reply{Outcome: OutcomeFail, Error: fmt.Sprintf("command argument %d is %T, want a string or a number", i, a)}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.timeout)
	defer cancel()
	v, err := d.resource.Do(ctx, args...).Result()
	var rerr redis.Error
	switch {
	case errors.Is(err, redis.Nil):
		return Reply{Outcome: OutcomeOK}
	case errors.As(err, &rerr):
		// The server ran the command and answered an error: no effect.
		return Reply{Outcome: OutcomeFail, Error: err.Error()}
	case locks.Classify(err) == locks.NoEffect:
		return Reply{Outcome: OutcomeFail, Error: err.Error()}
	case err != nil:
		return Reply{Outcome: OutcomeInfo, Error: err.Error()}
	}
	return Reply{Outcome: OutcomeOK, Reply: jsonable(v)}
}

// outcome classifies a lock's error as the history does. The lock has
// classified it (the Lock contract): fail only when it says the call
// certainly had no effect. An error it left unknown stays unknown even
// when a later step of the call never reached Redis (setnx-expire's
// PEXPIRE after its SETNX took the key).
func outcome(err error) Reply {
	switch {
	case err == nil:
		return Reply{Outcome: OutcomeOK}
	case locks.Failed(err):
		return Reply{Outcome: OutcomeFail, Error: err.Error()}
	}
	return Reply{Outcome: OutcomeInfo, Error: err.Error()}
}

// jsonable turns a RESP3 reply into JSON values: maps get string keys.
func jsonable(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	case map[any]any:
		out := map[string]any{}
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonable(e)
		}
		return out
	}
	return v
}

func monoOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return history.MonoNow() + int64(time.Until(t))
}

// arm sets the point to stop at; a request without one leaves it armed.
func (d *driver) arm(point string) {
	if point == "" {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.armed = point
}

// at is the lock's named-point hook: at the armed point the driver tells
// the harness and stops itself; it goes on when continued (or dies there).
func (d *driver) at(_ context.Context, point, key string) error {
	d.mu.Lock()
	hit := d.armed == point
	if hit {
		d.armed = ""
	}
	d.mu.Unlock()
	if !hit {
		return nil
	}
	d.emit(Event{Event: EventStopped, Point: point, Key: key})
	return raiseStop()
}

// raiseStop stops the whole process before this goroutine runs another
// instruction. Sent to the process, SIGSTOP may be taken by another thread
// while this one returns and goes on (it once sent the very DEL it was
// meant to hold back); sent to this thread with tgkill, it is taken on the
// way out of the syscall, as C's raise() does.
func raiseStop() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return unix.Tgkill(os.Getpid(), unix.Gettid(), unix.SIGSTOP)
}

// Renewing and Renewed report the lock's watchdog renewals as events.
func (d *driver) Renewing(l *locks.Lease) {
	d.emit(Event{Event: EventRenew, Phase: PhaseInvoke, Lease: d.idOf(l)})
}

func (d *driver) Renewed(l *locks.Lease, err error) {
	r := outcome(err)
	ev := Event{Event: EventRenew, Phase: r.Outcome, Lease: d.idOf(l), Error: r.Error, Refused: errors.Is(err, locks.ErrNotHeld)}
	if err == nil {
		ev.DeadlineMonoNS = monoOf(l.Deadline)
	}
	d.emit(ev)
}

func (d *driver) idOf(l *locks.Lease) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ids[l]
}

func (d *driver) close() {
	if d.lock != nil {
		locks.Close(d.lock)
	}
	if d.resource != nil {
		d.resource.Close()
	}
}
