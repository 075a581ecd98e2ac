package nemesis

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/workloads/moment"
)

// inFlight starts a real client process on simple and sends it an acquire
// of k, which someone else holds: the lock waits for it (wait_ms), so the
// request stays outstanding for seconds. It returns the request caught at
// its write and a channel with the call's error.
func inFlight(t *testing.T, e endpoints.Endpoints) (*moment.Sending, <-chan error) {
	t.Helper()
	sent := make(chan *moment.Sending, 4)
	var p *client.Process
	p, err := client.Start(clienttest.Command(), client.Options{OnSent: func(req client.Request, at time.Time) {
		if req.Op == client.OpAcquire {
			sent <- &moment.Sending{Proc: p, ID: req.ID, Op: history.Acquire, Key: req.Key, Lease: req.Lease, At: at}
		}
	}})
	require.NoError(t, err)
	t.Cleanup(p.Kill)
	rep, err := p.Call(context.Background(), client.Request{Op: client.OpOpen, Lock: "simple", TTLMS: 1000, Endpoints: &e,
		Options: &client.LockOptions{WaitMS: 5000, RetryDelayMS: 20, TimeoutMS: 1000}}, 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, client.OutcomeOK, rep.Outcome, rep.Error)
	done := make(chan error, 1)
	go func() {
		_, err := p.Call(context.Background(), client.Request{Op: client.OpAcquire, Key: "k", Lease: "p0.1"}, 30*time.Second)
		done <- err
	}()
	return <-sent, done
}

// A stop (or a kill) while the acquire is outstanding is recorded inside
// it; one after its reply was read is not. Real client processes and real
// signals, on a miniredis (this package's tests cannot import
// nemesis/nemesistest, which imports nemesis).
func TestAStopWhileTheRequestIsOutstandingIsInside(t *testing.T) {
	srv := miniredis.RunT(t)
	e := endpoints.Endpoints{Topology: endpoints.Independent, Masters: []string{"redis-1:6379"}, Addresses: map[string]string{"redis-1:6379": srv.Addr()}}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()

	t.Run("pause", func(t *testing.T) {
		require.NoError(t, rdb.Set(ctx, "k", "someone", 0).Err())
		req, done := inFlight(t, e)
		a := &aimed{sending: req, delay: 50 * time.Millisecond}
		heal, err := inOp{op: history.Acquire}.Inject(ctx, Env{}, Target{Process: req.Proc, aim: a}, 0)
		require.NoError(t, err)
		require.Equal(t, "T", req.Proc.(*client.Process).State(), "a real SIGSTOP")
		require.GreaterOrEqual(t, a.sent, a.delay, "the signal went no earlier than planned")
		require.NoError(t, rdb.Del(ctx, "k").Err()) // the waiter may now get it, once resumed
		require.NoError(t, heal(ctx))
		require.True(t, a.inside, "stopped while its acquire waited for the key")
		require.NoError(t, <-done, "it answers once resumed")
		require.True(t, req.Proc.Answered(req.ID))
	})
	t.Run("crash", func(t *testing.T) {
		require.NoError(t, rdb.Set(ctx, "k", "someone", 0).Err())
		req, done := inFlight(t, e)
		a := &aimed{sending: req, delay: 50 * time.Millisecond, kill: true}
		heal, err := inOp{op: history.Acquire, crash: true}.Inject(ctx, Env{}, Target{Process: req.Proc, aim: a}, 0)
		require.NoError(t, err)
		require.Nil(t, heal, "nothing to heal")
		require.True(t, a.inside, "killed while its acquire waited for the key")
		require.ErrorIs(t, <-done, client.ErrExited)
	})
	// The look-alikes: the same strikes once the reply has been read.
	for _, crash := range []bool{false, true} {
		name := map[bool]string{false: "pause after the reply", true: "crash after the reply"}[crash]
		t.Run(name, func(t *testing.T) {
			require.NoError(t, rdb.Del(ctx, "k").Err())
			req, done := inFlight(t, e)
			require.NoError(t, <-done, "a free key is granted at once")
			a := &aimed{sending: req, kill: crash}
			heal, err := inOp{op: history.Acquire, crash: crash}.Inject(ctx, Env{}, Target{Process: req.Proc, aim: a}, 0)
			require.NoError(t, err)
			if heal != nil {
				require.NoError(t, heal(ctx))
			}
			require.False(t, a.inside, "the reply was read before the stop")
			require.NoError(t, rdb.Del(ctx, "k").Err())
		})
	}
}

// A fault inside an operation struck without a request in flight (a
// schedule that found none) says so instead of signalling anything.
func TestAFaultInsideAnOperationNeedsARequest(t *testing.T) {
	_, err := inOp{op: history.Release}.Inject(context.Background(), Env{}, Target{Name: "process 3"}, 0)
	require.ErrorContains(t, err, "strikes a request in flight")
}

// windowStrikes is how many strikes TestStrikesLandInTheLocksWindows makes
// of each kind: `go test -run TestStrikesLandInTheLocksWindows ./nemesis/
// -strikes 200 -v` measures the hit rates per strike.
var windowStrikes = flag.Int("strikes", 40, "strikes per kind in TestStrikesLandInTheLocksWindows")

// Where a strike timed from the request's write lands inside two-command
// locks that declare no points, with Redis itself as the witness: a pause
// of a get-then-del release lands in its window when, once stopped, the
// client's last command on Redis was its GET and the key still holds its
// token (the DEL waits for the resume); a kill of a setnx-expire acquire
// lands in its window when the key is left with no TTL. Each delay is drawn
// as the nemesis draws it, over the median of the client's last latencies
// for the operation, stratified as a series of DefaultStrikes strikes
// draws them. The rates go to the test log, with the longest run of
// strikes in a row that missed the window; the test fails when no strike
// of a kind landed in its window.
func TestStrikesLandInTheLocksWindows(t *testing.T) {
	// Docker: real Redis's CLIENT LIST (last command per connection) and real latencies are the witness.
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	rdb := c.Clients(endpoints.DefaultClientOptions())[0]
	t.Cleanup(func() { rdb.Close() })
	rng := rand.New(rand.NewPCG(1, 2))
	n := *windowStrikes
	// As a series of DefaultStrikes draws its delays.
	release, acquire := newDelays(rng, DefaultStrikes), newDelays(rng, DefaultStrikes)

	t.Run("pause-in-release get-then-del-no-points", func(t *testing.T) {
		w := newWitness(t, c, "get-then-del-no-points")
		var inside, window, insideWindow, streak, longest int
		for i := 0; i < n; i++ {
			w.cycles(t, history.Release, 3)
			lease := w.acquire(t)
			req, done := w.send(t, client.Request{Op: client.OpRelease, Lease: lease})
			a := &aimed{sending: req, delay: release.next(w.latency(history.Release))}
			heal, err := inOp{op: history.Release}.Inject(context.Background(), Env{}, Target{Process: req.Proc, aim: a}, 0)
			require.NoError(t, err)
			// Whatever it sent before the stop reaches Redis meanwhile.
			time.Sleep(50 * time.Millisecond)
			last := w.lastCommand(t, rdb)
			v, _ := rdb.Get(context.Background(), "k").Result()
			in := last == "get" && v == w.token
			require.NoError(t, heal(context.Background()))
			require.NoError(t, <-done)
			inside += b2i(a.inside)
			window += b2i(in)
			insideWindow += b2i(in && a.inside)
			streak, longest = missed(in, streak, longest)
			require.False(t, in && !a.inside, "a stop between GET and DEL must be seen inside the release (strike %d)", i)
		}
		t.Logf("pause-in-release, get-then-del-no-points: %d strikes, %d inside the release (reply outstanding), %d between GET and DEL (%.0f%%), at most %d in a row missed it",
			n, inside, window, 100*float64(window)/float64(n), longest)
		require.Positive(t, window, "no strike landed between GET and DEL")
	})
	t.Run("crash-in-acquire setnx-expire-no-points", func(t *testing.T) {
		var inside, window, streak, longest int
		var w *witness
		for i := 0; i < n; i++ {
			if w == nil {
				w = newWitness(t, c, "setnx-expire-no-points")
			}
			w.cycles(t, history.Acquire, 3)
			req, done := w.send(t, client.Request{Op: client.OpAcquire, Key: "k", Lease: fmt.Sprintf("p0.%d", w.next())})
			a := &aimed{sending: req, kill: true, delay: acquire.next(w.latency(history.Acquire))}
			_, err := inOp{op: history.Acquire, crash: true}.Inject(context.Background(), Env{}, Target{Process: req.Proc, aim: a}, 0)
			require.NoError(t, err)
			<-done
			time.Sleep(50 * time.Millisecond)
			ttl, err := rdb.Do(context.Background(), "pttl", "k").Int64()
			require.NoError(t, err)
			in := ttl == -1 // taken, never to expire
			inside += b2i(a.inside)
			window += b2i(in)
			streak, longest = missed(in, streak, longest)
			require.False(t, in && !a.inside, "a kill between SETNX and PEXPIRE must be seen inside the acquire (strike %d)", i)
			require.NoError(t, rdb.Del(context.Background(), "k").Err())
			latencies := w.latencies
			w = newWitness(t, c, "setnx-expire-no-points")
			w.latencies = latencies // the same client, restarted
		}
		t.Logf("crash-in-acquire, setnx-expire-no-points: %d strikes, %d inside the acquire (reply outstanding), %d between SETNX and PEXPIRE (%.0f%%), at most %d in a row missed it",
			n, inside, window, 100*float64(window)/float64(n), longest)
		require.Positive(t, window, "no strike landed between SETNX and PEXPIRE")
	})
}

// witness is one client process of lock on key k, timed as the workload
// times its clients.
type witness struct {
	p         *client.Process
	sent      chan *moment.Sending
	latencies map[history.F][]time.Duration
	leases    int
	token     string
}

func newWitness(t *testing.T, c *cluster.Cluster, lock string) *witness {
	t.Helper()
	w := &witness{sent: make(chan *moment.Sending, 1), latencies: map[history.F][]time.Duration{}}
	p, err := client.Start(clienttest.Command(), client.Options{OnSent: func(req client.Request, at time.Time) {
		op := map[string]history.F{client.OpAcquire: history.Acquire, client.OpRelease: history.Release}[req.Op]
		w.sent <- &moment.Sending{Proc: w.p, ID: req.ID, Op: op, Key: req.Key, Lease: req.Lease, At: at}
	}})
	require.NoError(t, err)
	w.p = p
	t.Cleanup(p.Kill)
	e := c.Endpoints()
	rep, err := p.Call(context.Background(), client.Request{Op: client.OpOpen, Lock: lock, TTLMS: 10000, Endpoints: &e}, 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, client.OutcomeOK, rep.Outcome, rep.Error)
	<-w.sent
	// Its first call dials Redis: not the latency of an acquire.
	lease := fmt.Sprintf("p0.%d", w.next())
	for _, req := range []client.Request{{Op: client.OpAcquire, Key: "k", Lease: lease}, {Op: client.OpRelease, Lease: lease}} {
		_, done := w.send(t, req)
		require.NoError(t, <-done)
	}
	return w
}

func (w *witness) next() int { w.leases++; return w.leases }

// send writes req and returns it as caught at its write, with the call's
// error to come.
func (w *witness) send(t *testing.T, req client.Request) (*moment.Sending, <-chan error) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		rep, err := w.p.Call(context.Background(), req, 30*time.Second)
		if err == nil && rep.Outcome != client.OutcomeOK {
			err = fmt.Errorf("%s %s: %s", req.Op, rep.Outcome, rep.Error)
		}
		if err == nil && req.Op == client.OpAcquire {
			w.token = rep.Token
		}
		done <- err
	}()
	return <-w.sent, done
}

// timed sends req and keeps its latency, from the write to the reply.
func (w *witness) timed(t *testing.T, req client.Request) {
	t.Helper()
	s, done := w.send(t, req)
	require.NoError(t, <-done)
	op := s.Op
	w.latencies[op] = append(w.latencies[op], time.Since(s.At))
	if len(w.latencies[op]) > 16 {
		w.latencies[op] = w.latencies[op][1:]
	}
}

func (w *witness) acquire(t *testing.T) string {
	t.Helper()
	lease := fmt.Sprintf("p0.%d", w.next())
	w.timed(t, client.Request{Op: client.OpAcquire, Key: "k", Lease: lease})
	return lease
}

// cycles runs n acquire-release cycles, timing both.
func (w *witness) cycles(t *testing.T, _ history.F, n int) {
	t.Helper()
	for range n {
		lease := w.acquire(t)
		w.timed(t, client.Request{Op: client.OpRelease, Lease: lease})
	}
}

// latency is the median of the last latencies of op, as the workload's.
func (w *witness) latency(op history.F) time.Duration {
	ds := slices.Clone(w.latencies[op])
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// lastCommand is the last command Redis ran for the witness's client: the
// one connection that is not rdb's own.
func (w *witness) lastCommand(t *testing.T, rdb redis.UniversalClient) string {
	t.Helper()
	ctx := context.Background()
	me, err := rdb.ClientID(ctx).Result()
	require.NoError(t, err)
	list, err := rdb.ClientList(ctx).Result()
	require.NoError(t, err)
	last := ""
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		fields := map[string]string{}
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			fields[k] = v
		}
		if fields["id"] == strconv.FormatInt(me, 10) || fields["cmd"] == "NULL" {
			continue
		}
		if last != "" && last != fields["cmd"] {
			t.Fatalf("the witness has two connections with different last commands: %s", list)
		}
		last = fields["cmd"]
	}
	return last
}

// missed counts strikes in a row that missed their window.
func missed(hit bool, streak, longest int) (int, int) {
	if hit {
		return 0, longest
	}
	return streak + 1, max(longest, streak+1)
}

// A series' delays take every slice of the latency once, in a seeded
// order, each within its slice.
func TestDelaysAreStratifiedOverTheLatency(t *testing.T) {
	const n = 8
	d := newDelays(rand.New(rand.NewPCG(3, 4)), n)
	lat := 800 * time.Microsecond
	width := time.Duration(delaySpread * float64(lat) / n)
	for round := 0; round < 2; round++ {
		seen := map[int]bool{}
		for range n {
			x := d.next(lat)
			slice := int(x / width)
			require.False(t, seen[slice], "slice %d twice in one round", slice)
			require.Less(t, slice, n)
			seen[slice] = true
		}
		require.Len(t, seen, n)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
