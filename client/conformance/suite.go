// Package conformance is the driver protocol's conformance suite
// (docs/driver-protocol.md): what deadbolt expects of a driver, checked
// against a real driver process and a real Redis node. The Go tests run it
// on deadbolt's own driver and a minimal Python one; `deadbolt conformance
// --driver CMD` runs it for a driver's author and names each rule that
// failed.
package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/history"
)

// suite is the conformance suite for one driver command and lock.
type suite struct {
	cmd    client.Command
	lock   string
	e      endpoints.Endpoints
	master *redis.Client // the lock's node
	res    *redis.Client // the resource node
}

// Spec is the cluster the suite needs: one independent master and the
// resource node.
var Spec = cluster.Spec{Topology: cluster.Independent, Masters: 1, Resource: true}

// Run checks the driver cmd with its lock (a single-master lock, such as
// simple) against c, started from Spec, one step a subtest.
func Run(t T, c *cluster.Cluster, cmd client.Command, lock string) {
	s := &suite{cmd: cmd, lock: lock, e: c.Endpoints(),
		master: c.ByRole(cluster.RoleRedis)[0].Client(), res: c.ByRole(cluster.RoleResource)[0].Client()}
	t.Cleanup(func() { s.master.Close(); s.res.Close() })
	for _, step := range []struct {
		name string
		run  func(T)
	}{
		{"hello", s.hello},
		{"open comes first", s.openFirst},
		{"acquire refusal release", s.acquireRelease},
		{"resource replies", s.resource},
		{"unknown op", s.unknownOp},
		{"arm without points", s.armIgnored},
		{"lease expires after its ttl", s.expiry},
		{"pause", s.pause},
		{"unreachable nodes", s.unreachable},
		{"malformed line", s.malformed},
		{"end of input", s.endOfInput},
		{"calls on a held lease", s.leaseCalls},
	} {
		t.Run(step.name, step.run)
	}
}

// key is a Redis key of this test alone (the drivers share the nodes).
func key(t T) string {
	return "conformance:" + strings.ReplaceAll(t.Name(), " ", "-")
}

func (s *suite) start(t T) *client.Process {
	t.Helper()
	log := &syncBuffer{}
	p, err := client.Start(s.cmd, client.Options{Stderr: log})
	require.NoError(t, err)
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("stderr of %s:\n%s", s.cmd, log)
		}
	})
	return p
}

// openRequest opens the lock with a call timeout, and an acquire that
// gives up after its first refusal: wait_ms of 1 ms is the protocol's one
// attempt, and also a library's own blocking acquire bounded so (a lock
// that declares knobs keeps its library's defaults, redis-py's acquire
// blocks until it gets the lock, unless an option says otherwise).
func openRequest(lock string, ttl, timeout time.Duration, e endpoints.Endpoints) client.Request {
	return client.Request{Op: client.OpOpen, Lock: lock, TTLMS: ttl.Milliseconds(),
		Options: &client.LockOptions{TimeoutMS: timeout.Milliseconds(), WaitMS: 1}, Endpoints: &e}
}

// opened starts a driver and opens the lock on the cluster.
func (s *suite) opened(t T, ttl time.Duration) *client.Process {
	t.Helper()
	p := s.start(t)
	r := call(t, p, openRequest(s.lock, ttl, time.Second, s.e))
	require.Equal(t, client.OutcomeOK, r.Outcome, r.Error)
	return p
}

// value is what the lock's key holds on the master, whatever its type
// (a string token, a hash of holders), for comparing before and after.
func (s *suite) value(ctx context.Context, k string) string {
	v, err := s.master.Do(ctx, "DUMP", k).Text()
	if err != nil {
		return ""
	}
	return v
}

// call sends req and waits up to 10 s for its reply.
func call(t T, p *client.Process, req client.Request) client.Reply {
	t.Helper()
	r, err := p.Call(context.Background(), req, 10*time.Second)
	require.NoError(t, err)
	return r
}

func acquire(key, lease string) client.Request {
	return client.Request{Op: client.OpAcquire, Key: key, Lease: lease}
}

func release(lease string) client.Request { return client.Request{Op: client.OpRelease, Lease: lease} }

func resource(command ...any) client.Request {
	return client.Request{Op: client.OpResource, Command: command}
}

func (s *suite) hello(t T) {
	p := s.start(t)
	h := p.Hello()
	require.Equal(t, client.ProtocolVersion, h.Protocol)
	require.Equal(t, p.PID(), h.PID, "the hello names the process the harness started, the one it pauses")
	require.Contains(t, h.Locks, s.lock, "the hello lists the lock under test")
	require.NotEmpty(t, h.Driver)
	require.Positive(t, h.MonoNS)
	require.LessOrEqual(t, h.MonoNS, history.MonoNow(), "mono_ns is CLOCK_MONOTONIC")
}

func (s *suite) openFirst(t T) {
	p := s.start(t)
	r := call(t, p, acquire(key(t), "p0.1"))
	require.Equal(t, client.OutcomeFail, r.Outcome, "a request before open")
	require.NotEmpty(t, r.Error)
	require.False(t, r.Refused)
	require.Equal(t, client.OutcomeFail, call(t, p, resource("PING")).Outcome, "a request before open")

	r = call(t, p, client.Request{Op: client.OpOpen, Lock: "no-such-lock", TTLMS: 1000, Endpoints: &s.e})
	require.Equal(t, client.OutcomeFail, r.Outcome, "an unknown lock")
	require.NotEmpty(t, r.Error)
	bad := s.e
	bad.Addresses = map[string]string{}
	r = call(t, p, openRequest(s.lock, time.Second, time.Second, bad))
	require.Equal(t, client.OutcomeFail, r.Outcome, "endpoints whose nodes have no address")
	require.NotEmpty(t, r.Error)

	r = call(t, p, openRequest(s.lock, 5*time.Second, time.Second, s.e))
	require.Equal(t, client.OutcomeOK, r.Outcome, "the failed opens left nothing behind: %s", r.Error)
	require.Equal(t, client.OutcomeFail, call(t, p, openRequest(s.lock, 5*time.Second, time.Second, s.e)).Outcome, "a second open")
	r = call(t, p, acquire(key(t), "p0.2"))
	require.Equal(t, client.OutcomeOK, r.Outcome, r.Error)
	require.Equal(t, client.OutcomeOK, call(t, p, release("p0.2")).Outcome)
}

func (s *suite) acquireRelease(t T) {
	ctx := context.Background()
	const ttl = 5 * time.Second
	a, b := s.opened(t, ttl), s.opened(t, ttl)
	k := key(t)

	sent := history.MonoNow()
	r := call(t, a, acquire(k, "p0.1"))
	got := history.MonoNow()
	require.Equal(t, client.OutcomeOK, r.Outcome, r.Error)
	require.NotEmpty(t, r.Token)
	// deadline_mono_ns is 0 (or absent) when the lock does not say; a
	// deadline it does give is on CLOCK_MONOTONIC, about a TTL on.
	if r.DeadlineMonoNS != 0 {
		require.Greater(t, r.DeadlineMonoNS, sent, "the deadline is on CLOCK_MONOTONIC, after the request")
		require.LessOrEqual(t, r.DeadlineMonoNS, got+ttl.Nanoseconds(), "at most a TTL after the reply")
		require.GreaterOrEqual(t, r.DeadlineMonoNS, sent+(ttl-time.Second).Nanoseconds(), "about a TTL later")
	}
	require.Equal(t, int64(1), s.master.Exists(ctx, k).Val(), "the lock is the key on the master")
	v := s.value(ctx, k)
	pttl, err := s.master.PTTL(ctx, k).Result()
	require.NoError(t, err)
	require.True(t, pttl > 0 && pttl <= ttl, "the key expires within the TTL, not %v", pttl)

	r = call(t, b, acquire(k, "p1.1"))
	require.Equal(t, client.OutcomeFail, r.Outcome, "the key is taken")
	require.True(t, r.Refused, "a taken key is a refusal, not an outage")
	require.NotEmpty(t, r.Error)

	r = call(t, a, client.Request{Op: client.OpAcquire, Key: k})
	require.Equal(t, client.OutcomeFail, r.Outcome, "an acquire without a lease")
	require.False(t, r.Refused, "a bad request is no refusal")
	require.Equal(t, client.OutcomeFail, call(t, a, release("p0.99")).Outcome, "a lease the driver does not know")
	require.Equal(t, v, s.value(ctx, k), "neither touched the lock")

	r = call(t, a, release("p0.1"))
	require.Equal(t, client.OutcomeOK, r.Outcome, r.Error)
	require.Zero(t, s.master.Exists(ctx, k).Val(), "released")
	require.Equal(t, client.OutcomeFail, call(t, a, release("p0.1")).Outcome, "the lease is forgotten after a release")

	r = call(t, b, acquire(k, "p1.2"))
	require.Equal(t, client.OutcomeOK, r.Outcome, "free again after the release: %s", r.Error)
	require.Equal(t, int64(1), s.master.Exists(ctx, k).Val())
	require.Equal(t, client.OutcomeOK, call(t, b, release("p1.2")).Outcome)
}

// leaseCalls checks the calls on a held lease the lock declares (calls in
// lock_info): each says ok on a lease it holds, giving the key its TTL
// anew; fail for a lease the driver does not know; and fail, refused, once
// the key is another's. A lock that declares none is not asked.
func (s *suite) leaseCalls(t T) {
	hello, err := client.Probe(s.cmd)
	require.NoError(t, err)
	calls := hello.Info[s.lock].Calls
	if len(calls) == 0 {
		return
	}
	ctx := context.Background()
	const ttl = 5 * time.Second
	a := s.opened(t, ttl)
	for _, op := range calls {
		k := key(t) + ":" + op
		require.Equal(t, client.OutcomeOK, call(t, a, acquire(k, "p0."+op)).Outcome)
		require.NoError(t, s.master.PExpire(ctx, k, time.Second).Err())
		r := call(t, a, client.Request{Op: op, Lease: "p0." + op})
		require.Equal(t, client.OutcomeOK, r.Outcome, "%s of a lease it holds: %s", op, r.Error)
		pttl := s.master.PTTL(ctx, k).Val()
		require.Greater(t, pttl, 2*time.Second, "%s gave the key its TTL anew, not %v", op, pttl)
		require.Equal(t, client.OutcomeFail, call(t, a, client.Request{Op: op, Lease: "p0.99"}).Outcome, "%s of a lease the driver does not know", op)
		require.NoError(t, s.master.Set(ctx, k, "someone-else", ttl).Err())
		r = call(t, a, client.Request{Op: op, Lease: "p0." + op})
		require.Equal(t, client.OutcomeFail, r.Outcome, "%s of a key another holds", op)
		require.True(t, r.Refused, "%s that found the key another's is refused: the lock said no", op)
		require.Equal(t, "someone-else", s.master.Get(ctx, k).Val(), "%s left another's key alone", op)
		s.master.Del(ctx, k)
	}
}

func (s *suite) resource(t T) {
	ctx := context.Background()
	p := s.opened(t, 5*time.Second)
	reg, other := key(t), key(t)+":absent"

	r := call(t, p, resource("SET", reg, 41, "GET"))
	require.Equal(t, client.OutcomeOK, r.Outcome, r.Error)
	require.Nil(t, r.Reply, "nil is null or absent")
	r = call(t, p, resource("SET", reg, 41))
	require.Equal(t, "OK", r.Reply, "a status reply is a string")
	r = call(t, p, resource("INCR", reg))
	require.Equal(t, client.OutcomeOK, r.Outcome, r.Error)
	require.Equal(t, float64(42), r.Reply, "an integer is a JSON number")
	r = call(t, p, resource("GET", reg))
	require.Equal(t, "42", r.Reply, "a bulk string is a string")
	// Two GETs in one script, not MGET: the lock user of deadbolt's nodes
	// may run only what locks and workloads need (cluster/acl.go).
	r = call(t, p, resource("EVAL", `return {redis.call("GET", KEYS[1]), redis.call("GET", KEYS[2])}`, 2, reg, other))
	require.Equal(t, []any{"42", nil}, r.Reply, "an array is an array")
	r = call(t, p, resource("EVAL", `return {1, redis.error_reply("ERR inner")}`, 0))
	require.Equal(t, client.OutcomeOK, r.Outcome, r.Error)
	require.Equal(t, []any{float64(1), "ERR inner"}, r.Reply, "an error inside an array is its message")

	r = call(t, p, resource("HSET", reg, "f", "v"))
	require.Equal(t, client.OutcomeFail, r.Outcome, "an error reply had no effect")
	require.Contains(t, r.Error, "WRONGTYPE")

	require.Equal(t, "42", s.res.Get(ctx, reg).Val(), "the commands ran on the resource node")
	require.Zero(t, s.master.Exists(ctx, reg).Val(), "and not on the lock's")
}

func (s *suite) unknownOp(t T) {
	p := s.opened(t, 5*time.Second)
	r := call(t, p, client.Request{Op: "frobnicate"})
	require.Equal(t, client.OutcomeFail, r.Outcome)
	require.NotEmpty(t, r.Error)
	r = call(t, p, resource("PING"))
	require.Equal(t, client.OutcomeOK, r.Outcome, "the driver carries on: %s", r.Error)
	require.Equal(t, "PONG", r.Reply)
}

// A request may carry a point to stop at; a lock without points goes on.
func (s *suite) armIgnored(t T) {
	p := s.opened(t, 5*time.Second)
	p.Arm("after-get")
	r := call(t, p, acquire(key(t), "p0.1"))
	require.Equal(t, client.OutcomeOK, r.Outcome, r.Error)
	require.Equal(t, client.OutcomeOK, call(t, p, release("p0.1")).Outcome)
}

// A lease the holder never releases expires by itself after the TTL, and
// not before; the holder's release then fails and leaves the new holder be.
func (s *suite) expiry(t T) {
	const ttl = 300 * time.Millisecond
	holder, other := s.opened(t, ttl), s.opened(t, 5*time.Second)
	k := key(t)
	sent := history.MonoNow()
	r := call(t, holder, acquire(k, "p0.1"))
	require.Equal(t, client.OutcomeOK, r.Outcome, r.Error)

	var after int64
	var failure error
	n := 0
	require.Eventually(t, func() bool {
		n++
		r, err := other.Call(context.Background(), acquire(k, fmt.Sprintf("p1.%d", n)), 10*time.Second)
		switch {
		case err != nil:
			failure = err
		case r.Outcome == client.OutcomeOK:
			after = history.MonoNow() - sent
		case r.Outcome != client.OutcomeFail || !r.Refused:
			failure = fmt.Errorf("while the key is held: %+v, want a refusal", r)
		default:
			return false
		}
		return true
	}, 10*time.Second, 20*time.Millisecond, "the key never expired")
	require.NoError(t, failure)
	require.GreaterOrEqual(t, after, (ttl - 10*time.Millisecond).Nanoseconds(), "taken over before the TTL ran out")

	held := s.value(context.Background(), k)
	require.Equal(t, client.OutcomeFail, call(t, holder, release("p0.1")).Outcome, "no longer the holder's")
	require.Equal(t, held, s.value(context.Background(), k), "the release checked the owner")
}

// A pause is a SIGSTOP of the process the hello named: it answers nothing
// until it is continued, and then answers.
func (s *suite) pause(t T) {
	p := s.opened(t, 5*time.Second)
	require.NoError(t, p.Pause())
	require.Equal(t, "T", p.State())
	type result struct {
		r   client.Reply
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := p.Call(context.Background(), resource("PING"), 10*time.Second)
		done <- result{r, err}
	}()
	select {
	case res := <-done:
		t.Fatalf("a stopped driver answered: %+v %v", res.r, res.err)
	case <-time.After(200 * time.Millisecond):
	}
	require.NoError(t, p.Resume())
	res := <-done
	require.NoError(t, res.err)
	require.Equal(t, client.OutcomeOK, res.r.Outcome, res.r.Error)
	require.NotEqual(t, "T", p.State())
}

// Nodes that refuse connections make requests fail (not refused: the key
// was never seen); nodes that never answer make them info, within the
// call timeout and not before it. open itself needs no node.
func (s *suite) unreachable(t T) {
	at := func(addr string) endpoints.Endpoints {
		return endpoints.Endpoints{Topology: endpoints.Independent, Masters: []string{"redis-1:6379"}, Resource: "resource:6379",
			Addresses: map[string]string{"redis-1:6379": addr, "resource:6379": addr}}
	}
	t.Run("connection refused", func(t T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		require.NoError(t, ln.Close())
		p := s.start(t)
		// Well above the ~400ms go-redis spends redialling (5 attempts,
		// 100ms apart) before it reports a refusal: with less, the Go
		// driver's call times out first, and it answers info.
		r := call(t, p, openRequest(s.lock, time.Second, 2*time.Second, at(addr)))
		require.Equal(t, client.OutcomeOK, r.Outcome, "open needs no node: %s", r.Error)
		r = call(t, p, acquire(key(t), "p0.1"))
		require.Equal(t, client.OutcomeFail, r.Outcome, "never sent: %s", r.Error)
		require.False(t, r.Refused, "an unreachable node is no refusal")
		require.NotEmpty(t, r.Error)
		r = call(t, p, resource("PING"))
		require.Equal(t, client.OutcomeFail, r.Outcome, "never sent: %s", r.Error)
	})
	t.Run("no answer", func(t T) {
		const timeout = time.Second
		hole := newBlackhole(t)
		p := s.start(t)
		r := call(t, p, openRequest(s.lock, time.Second, timeout, at(hole.addr())))
		require.Equal(t, client.OutcomeOK, r.Outcome, r.Error)
		res, lock := key(t)+":resource", key(t)+":lock"
		for k, req := range map[string]client.Request{res: resource("SET", res, 1), lock: acquire(lock, "p0.1")} {
			began := time.Now()
			r = call(t, p, req)
			took := time.Since(began)
			require.NotEqual(t, client.OutcomeOK, r.Outcome, "%s", req.Op)
			require.False(t, r.Refused, "an unanswered node is no refusal")
			if hole.saw(k) {
				require.Equal(t, client.OutcomeInfo, r.Outcome, "%s reached the node: its outcome is unknown", req.Op)
			}
			require.GreaterOrEqual(t, took, timeout*9/10, "%s gave up before timeout_ms", req.Op)
			require.Less(t, took, 3*timeout+2*time.Second, "%s is bounded by timeout_ms", req.Op)
		}
	})
}

// A line that is not a request ends the driver with status 2, after an
// error event.
func (s *suite) malformed(t T) {
	for name, line := range map[string]string{
		"not json":    `{this is not json`,
		"not object":  `[1,2,3]`,
		"no id":       `{"op":"open"}`,
		"string id":   `{"id":"1","op":"open"}`,
		"two objects": `{"id":1,"op":"frobnicate"} {"id":2,"op":"frobnicate"}`,
	} {
		t.Run(name, func(t T) {
			d := s.startRaw(t)
			d.write(t, []byte(line))
			var ev client.Event
			out := d.next(t)
			require.NoError(t, json.Unmarshal(out, &ev), "%s", out)
			require.Equal(t, client.EventError, ev.Event, "an error event, not %s", out)
			require.NotEmpty(t, ev.Error)
			require.Positive(t, ev.MonoNS)
			d.eof(t)
			require.Equal(t, 2, d.exitCode(t))
		})
	}
}

// At the end of its input the driver exits 0, promptly, and releases
// nothing.
func (s *suite) endOfInput(t T) {
	// The grace the workloads give a driver to exit before they kill it.
	const grace = 2 * time.Second
	d := s.startRaw(t)
	k := key(t)
	r := d.call(t, openRequest(s.lock, 5*time.Second, time.Second, s.e))
	require.Equal(t, client.OutcomeOK, r.Outcome, r.Error)
	r = d.call(t, acquire(k, "p0.1"))
	require.Equal(t, client.OutcomeOK, r.Outcome, r.Error)
	closed := time.Now()
	require.NoError(t, d.stdin.Close())
	d.eof(t)
	require.Equal(t, 0, d.exitCode(t))
	require.Less(t, time.Since(closed), grace, "the driver took its time to exit")
	require.Equal(t, int64(1), s.master.Exists(context.Background(), k).Val(), "the lease was left as it was")
}

// rawDriver is a driver started without Process, which only ever writes
// well-formed requests: the test writes lines of its own choosing.
type rawDriver struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte   // stdout, closed at its end
	exited chan struct{} // closed once the process was waited for
	nextID int64
}

func (s *suite) startRaw(t T) *rawDriver {
	t.Helper()
	cmd := exec.Command(s.cmd.Path, s.cmd.Args...)
	cmd.Env = append(os.Environ(), s.cmd.Env...)
	log := &syncBuffer{}
	cmd.Stderr = log
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	d := &rawDriver{cmd: cmd, stdin: stdin, lines: make(chan []byte, 16), exited: make(chan struct{}), nextID: 1}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			d.lines <- bytes.Clone(sc.Bytes())
		}
		close(d.lines)
		_ = cmd.Wait()
		close(d.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		for range d.lines {
		}
		<-d.exited
		if t.Failed() {
			t.Logf("stderr of %s:\n%s", s.cmd, log)
		}
	})
	var hello client.Event
	line := d.next(t)
	require.NoError(t, json.Unmarshal(line, &hello), "%s", line)
	require.Equal(t, client.EventHello, hello.Event)
	return d
}

func (d *rawDriver) write(t T, line []byte) {
	t.Helper()
	_, err := d.stdin.Write(append(line, '\n'))
	require.NoError(t, err)
}

// next is the driver's next output line.
func (d *rawDriver) next(t T) []byte {
	t.Helper()
	select {
	case line, ok := <-d.lines:
		require.True(t, ok, "the driver's output ended")
		return line
	case <-time.After(10 * time.Second):
		t.Fatalf("no line from the driver in 10s")
		return nil
	}
}

func (d *rawDriver) call(t T, req client.Request) client.Reply {
	t.Helper()
	req.ID = d.nextID
	d.nextID++
	b, err := json.Marshal(req)
	require.NoError(t, err)
	d.write(t, b)
	var r client.Reply
	line := d.next(t)
	require.NoError(t, json.Unmarshal(line, &r), "%s", line)
	require.Equal(t, req.ID, r.ID, "%s", line)
	return r
}

// eof checks that the driver writes nothing more.
func (d *rawDriver) eof(t T) {
	t.Helper()
	select {
	case line, ok := <-d.lines:
		require.False(t, ok, "more output: %s", line)
	case <-time.After(10 * time.Second):
		t.Fatalf("the driver's output did not end in 10s")
	}
}

func (d *rawDriver) exitCode(t T) int {
	t.Helper()
	select {
	case <-d.exited:
		return d.cmd.ProcessState.ExitCode()
	case <-time.After(10 * time.Second):
		t.Fatalf("the driver did not exit in 10s")
		return -1
	}
}

// blackhole accepts connections and reads from them, and never answers:
// a node that is paused or cut off.
type blackhole struct {
	ln    net.Listener
	mu    sync.Mutex
	got   bytes.Buffer
	conns []net.Conn
}

func newBlackhole(t T) *blackhole {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	h := &blackhole{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, c)
			h.mu.Unlock()
			go func() {
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					h.mu.Lock()
					h.got.Write(buf[:n])
					h.mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, c := range h.conns {
			c.Close()
		}
	})
	return h
}

func (h *blackhole) addr() string { return h.ln.Addr().String() }

// saw reports whether s reached the node.
func (h *blackhole) saw(s string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return bytes.Contains(h.got.Bytes(), []byte(s))
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
