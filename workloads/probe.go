package workloads

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
)

// ErrDriverRefused is a client whose driver could not take and release a
// lock on the healthy cluster before the run began: it does not fit the
// cluster (credentials, topology, TLS), and nothing the run would record
// could be judged. Its message is the driver's own.
var ErrDriverRefused = errors.New("a client's driver could not use its lock before the run")

// probeTries and probePause bound the probe's acquires.
const (
	probeTries = 5
	probePause = 100 * time.Millisecond
)

// timedOut reports an error that says a call ran out of time (Go's
// deadline and i/o timeouts, Python's timeouts), rather than why it could
// not work.
func timedOut(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "deadline exceeded") || strings.Contains(m, "timeout") || strings.Contains(m, "timed out")
}

// probeKey is the key client slot's driver is tried on in run: no scenario
// uses it, and no earlier run on a kept cluster left it.
func probeKey(run uint64, slot int) string { return fmt.Sprintf("deadbolt-probe:%x:%d", run, slot) }

// Probe tries every client slot's driver before the run, on the cluster
// as each slot reaches it, outside the history: a fresh process opens the
// lock, takes and releases a lock on a key of its own (making each call on a held
// lease the workload will make in between), and ends. Besides a driver
// that cannot work here, this leaves the lock service as a fleet that has
// been running leaves it: its scripts cached on the nodes, so the first
// call of the run is not the one that loads them.
func (r *Runner) Probe(ctx context.Context) error {
	run := rand.Uint64()
	errs := make([]error, r.cfg.Clients)
	var wg sync.WaitGroup
	for slot := range r.cfg.Clients {
		wg.Go(func() { errs[slot] = r.probe(ctx, probeKey(run, slot), slot) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (r *Runner) probe(ctx context.Context, key string, slot int) error {
	lock, driver := r.cfg.lockOf(slot)
	p, err := client.Start(driver, client.Options{Stderr: io.Discard})
	if err != nil {
		return fmt.Errorf("%w: client %d: %v", ErrDriverRefused, slot, err)
	}
	defer p.Close(2e9)
	e := r.cfg.Endpoints
	if r.cfg.SlotEndpoints != nil {
		if e, err = r.cfg.SlotEndpoints(slot); err != nil {
			return err
		}
	}
	lo := r.cfg.LockOptions
	if lock != r.cfg.Lock {
		lo.Library = nil // the knobs are the run's lock's
	}
	// open and the acquire of a free key must say ok; the calls after it
	// may say no (a lock may judge its lease gone: that is the run's to
	// judge) or not know (a reply that timed out on a loaded machine: the
	// driver fit, it took the lock), but the process must answer.
	slow := 0 // acquires that timed out: the cluster was slow, not the driver unfit
	call := func(req client.Request) error {
		rep, err := p.Call(ctx, req, r.cfg.replyTimeout())
		switch {
		case err != nil:
			return fmt.Errorf("%w: client %d's %s on %s: %v", ErrDriverRefused, slot, req.Op, key, err)
		case rep.Outcome == client.OutcomeOK:
		case rep.Outcome != client.OutcomeOK && req.Op != client.OpOpen && req.Op != client.OpAcquire:
		default:
			if req.Op == client.OpAcquire && rep.Outcome == client.OutcomeInfo && timedOut(rep.Error) {
				slow++
			}
			return fmt.Errorf("%w: client %d's %s on %s ended %s: %s", ErrDriverRefused, slot, req.Op, key, rep.Outcome, rep.Error)
		}
		return nil
	}
	if err := call(client.Request{Op: client.OpOpen, Lock: lock, TTLMS: r.cfg.TTL.D().Milliseconds(), Options: &lo, Endpoints: &e}); err != nil {
		return err
	}
	// A fresh process dials its connections on its first acquire, which a
	// lock with a tight per-node bound (RedLock's TTL/20) may miss on a
	// loaded machine: a few tries, the first one ok counts, each on a key
	// of its own (a try that timed out may have left its key on some
	// masters: redsync's next try found it "already taken").
	lease, base := "probe", key
	for try := range probeTries {
		key = fmt.Sprintf("%s:%d", base, try)
		if err = call(client.Request{Op: client.OpAcquire, Key: key, Lease: fmt.Sprintf("%s%d", lease, try)}); err == nil {
			lease = fmt.Sprintf("%s%d", lease, try)
			break
		}
		time.Sleep(probePause)
	}
	if err != nil && slow == probeTries {
		// Every try answered, and timed out: on a loaded machine the
		// cluster, not the driver, was slow. A driver that does not fit
		// (credentials, topology, TLS) says so with an error of its own;
		// this one is let run, and the run judges what it does.
		return nil
	}
	if err != nil {
		return err
	}
	for _, c := range r.kind.Calls {
		if err := call(client.Request{Op: c, Lease: lease}); err != nil {
			return err
		}
	}
	return call(client.Request{Op: client.OpRelease, Lease: lease})
}
