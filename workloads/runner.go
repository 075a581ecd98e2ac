package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/workloads/moment"
)

// Runner runs a workload's clients, one session per client slot, each
// session one OS process at a time, and lets faults find those processes.
type Runner struct {
	cfg       Config
	w         Workload
	kind      Kind
	processes atomic.Int64

	mu      sync.Mutex
	byProc  map[int]*client.Process // history process id -> its OS process
	slots   []*Session
	logs    []*os.File
	stops   map[int]chan moment.Stop
	nextSub int
	closed  bool
	catches []*catch // faults waiting for their moment (moments.go)
	// sendCatches are faults waiting for a request's write, latencies what
	// they time themselves over (sends.go).
	sendCatches []*sendCatch
	latencies   latencies

	gates *gates
	// mixedBy is the lock each history process opened, where it was a
	// mixed one (mix.go).
	mixedBy map[int]string
	// inspecting serialises the harness's reads after refusals.
	inspecting sync.Mutex
}

// NewRunner checks the configuration and builds the named workload.
func NewRunner(name string, cfg Config) (*Runner, error) {
	k, err := Get(name)
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if k.NeedsKeys && len(cfg.Keys) == 0 {
		return nil, fmt.Errorf("workload %s needs lock keys", name)
	}
	if cfg.Rec == nil {
		return nil, errors.New("a workload needs a history recorder")
	}
	return &Runner{cfg: cfg, w: k.New(cfg), kind: k, byProc: map[int]*client.Process{}, stops: map[int]chan moment.Stop{}, gates: newGates(), latencies: latencies{}}, nil
}

// Run sets the resource up, drives the clients until stop closes or ctx
// ends, lets each finish its operation and release what it holds, ends
// every client process and reads the resource. Operations run under their
// own timeouts, so a stopped run still records how each one ended; an
// ended ctx kills the clients at once.
func (r *Runner) Run(ctx context.Context, stop <-chan struct{}) (err error) {
	defer r.closeAll()
	var h *Harness
	if r.kind.Resource {
		// Patient: nothing is timed outside the lock (the audit lost a run
		// to a final read that waited a client's half second).
		rdb, err := r.cfg.Endpoints.ResourceClient(endpoints.PatientClientOptions())
		if err != nil {
			return err
		}
		defer rdb.Close()
		h = &Harness{Rec: r.cfg.Rec, Resource: rdb}
		if err := r.w.Setup(ctx, h); err != nil {
			return fmt.Errorf("set up the resource: %w", err)
		}
	}
	// An interrupt kills every client: a paused one would never answer.
	go func() {
		select {
		case <-ctx.Done():
			r.killAll()
		case <-stop:
		}
	}()
	var wg sync.WaitGroup
	errs := make([]error, r.cfg.Clients)
	for i := 0; i < r.cfg.Clients; i++ {
		s := &Session{r: r, slot: i, rng: rand.New(rand.NewPCG(r.cfg.Seed, uint64(i))), leases: map[string]*Lease{}, stop: stop, ctx: ctx}
		r.mu.Lock()
		r.slots = append(r.slots, s)
		r.mu.Unlock()
		wg.Go(func() { errs[i] = s.run() })
	}
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if h != nil {
		if err := r.w.Final(ctx, h); err != nil {
			return fmt.Errorf("read the resource after the run: %w", err)
		}
	}
	return nil
}

func (r *Runner) nextProcess() int { return int(r.processes.Add(1) - 1) }

// Process is the OS process behind a history process id (a client's own,
// or one of its watchdogs), nil once it is gone.
func (r *Runner) Process(p int) *client.Process {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byProc[p]
}

// Client is the current history process id and OS process of client slot
// n, while it has one.
func (r *Runner) Client(n int) (int, *client.Process, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n < 0 || n >= len(r.slots) {
		return 0, nil, fmt.Errorf("no client %d (the run has %d)", n, len(r.slots))
	}
	s := r.slots[n]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0, nil, fmt.Errorf("client %d has no process now", n)
	}
	return s.process, s.proc, nil
}

// WaitClient is Client once slot n has a process: a slot has none while
// its first process starts (seconds on a loaded machine) or while a dead
// one is replaced. It fails when ctx ends first or n is no slot.
func (r *Runner) WaitClient(ctx context.Context, n int) (int, moment.Process, error) {
	if n < 0 || n >= r.cfg.Clients {
		return 0, nil, fmt.Errorf("no client %d (the run has %d)", n, r.cfg.Clients)
	}
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		id, p, err := r.Client(n)
		if err == nil {
			return id, p, nil
		}
		select {
		case <-ctx.Done():
			return 0, nil, fmt.Errorf("%w: %w", err, ctx.Err())
		case <-t.C:
		}
	}
}

// Slots is how many client slots the run has.
func (r *Runner) Slots() int { return r.cfg.Clients }

// WatchStops delivers every client's stop at an armed point until cancel.
func (r *Runner) WatchStops() (<-chan moment.Stop, func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.nextSub
	r.nextSub++
	ch := make(chan moment.Stop, 16)
	r.stops[id] = ch
	return ch, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.stops, id)
	}
}

func (r *Runner) stopped(s moment.Stop) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.stops) == 0 && s.Proc != nil {
		// Armed by a fault that gave up waiting: nobody would resume it.
		go s.Proc.Resume()
		return
	}
	for _, ch := range r.stops {
		select {
		case ch <- s:
		default: // a watcher that does not keep up misses stops, never blocks a client
		}
	}
}

func (r *Runner) track(id int, p *client.Process) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p == nil {
		delete(r.byProc, id)
		return
	}
	r.byProc[id] = p
}

// logFile is the log of history process id, or nil without a LogDir.
func (r *Runner) logFile(id int) (*os.File, error) {
	if r.cfg.LogDir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(r.cfg.LogDir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(r.cfg.LogDir, fmt.Sprintf("p%d.log", id)))
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.logs = append(r.logs, f)
	r.mu.Unlock()
	return f, nil
}

// killAll ends every client process at once.
func (r *Runner) killAll() {
	r.mu.Lock()
	procs := make([]*client.Process, 0, len(r.byProc))
	for _, p := range r.byProc {
		procs = append(procs, p)
	}
	r.mu.Unlock()
	for _, p := range procs {
		p.Kill()
	}
}

// closeAll makes sure no client process outlives the run, whatever path
// it ended on, and closes the logs.
func (r *Runner) closeAll() {
	r.killAll()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.logs {
		f.Close()
	}
	r.logs, r.closed = nil, true
}

// between is a random duration in [lo, hi).
func between(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}

// sleep waits d, cut short by any of a, b, c (nil ones never fire).
func sleep(d time.Duration, a, b, c <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-a:
	case <-b:
	case <-c:
	}
}
