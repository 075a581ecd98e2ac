package nemesis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

func init() {
	register("plan", "", "the faults of the scenario's steps, each on its target at its moment (see `deadbolt faults`)",
		func(p Params) Nemesis { return &Plan{Steps: p.Steps} })
}

// Step is one fault of a plan: which fault, on what, when, for how long.
type Step struct {
	Fault string `json:"fault"`
	// Target is a selector (target.go); "" takes the fault's default.
	Target string `json:"target,omitempty"`
	// Key is the key whose holder the holder target means, and On the
	// workload event that shows it holds Key: an ok acquire (the default)
	// or an ok read of the resource under the lease.
	Key string    `json:"key,omitempty"`
	On  history.F `json:"on,omitempty"`
	// Point, for a fault on a client, arms this named point inside the
	// lock on the target (such as between GET and DEL) and strikes when the
	// client has stopped itself there.
	Point string `json:"point,omitempty"`
	// WaitKey, when set, holds the step back until client slot WaitSlot's
	// (any client's, with AnySlot) acquire of WaitKey is ok: the workload
	// event the fault is aimed at.
	WaitKey  string `json:"wait_key,omitempty"`
	WaitSlot int    `json:"wait_slot,omitempty"`
	// After is how long after the previous step struck (and the wait) this
	// one strikes.
	After time.Duration `json:"after,omitempty"`
	// For is how long the fault lasts; 0 (with no TTLs) keeps it until the
	// run ends. A fault with nothing to heal (a crash) ends at once.
	For time.Duration `json:"for,omitempty"`
	// TTLs adds this many lease TTLs to For: 1 outlasts every lease the
	// target granted (antirez's delayed restart), 2 is a pause in which the
	// holder's lease surely runs out.
	TTLs int `json:"ttls,omitempty"`
	// By is the fault's size: a clock jump, a link delay.
	By time.Duration `json:"by,omitempty"`
}

func (s Step) validate() error {
	e, err := lookupFault(s.Fault)
	if err != nil {
		return err
	}
	target := s.Target
	if target == "" {
		target = e.target
	}
	if err := checkSelector(target); err != nil {
		return fmt.Errorf("fault %s: %w", s.Fault, err)
	}
	if s.After < 0 || s.For < 0 || s.TTLs < 0 || s.WaitSlot < AnySlot {
		return fmt.Errorf("fault %s: negative after, for, ttls or wait slot", s.Fault)
	}
	if err := checkHolderEvent(s.On); err != nil {
		return fmt.Errorf("fault %s: %w", s.Fault, err)
	}
	if kind, _, _ := strings.Cut(target, ":"); s.Point != "" && kind != "client" && kind != "holder" {
		return fmt.Errorf("fault %s: a point inside the lock needs a client target, not %q", s.Fault, target)
	}
	return nil
}

// AnySlot as a step's WaitSlot waits for any client's acquire.
const AnySlot = -1

// Plan runs its steps in order; each heals on its own schedule, so faults
// overlap as the steps say. Everything is healed before Run returns. The
// cluster's health is checked after the heal that leaves no fault in
// effect, which makes it the check before the next fault too (the first
// has CheckBefore's).
type Plan struct {
	Steps  []Step
	active atomic.Int32 // faults struck and not yet healed
}

func (n *Plan) Span(ttl time.Duration) time.Duration {
	var at, end time.Duration
	for _, s := range n.Steps {
		at += s.After
		end = max(end, at+s.hold(ttl))
	}
	return end
}

// hold is how long the step's fault lasts; 0 keeps it until the run ends.
func (s Step) hold(ttl time.Duration) time.Duration {
	return s.For + time.Duration(s.TTLs)*ttl
}

func (n *Plan) validate() error {
	if len(n.Steps) == 0 {
		return errors.New("nemesis plan needs at least one step")
	}
	for _, s := range n.Steps {
		if err := s.validate(); err != nil {
			return err
		}
	}
	return nil
}

func (n *Plan) Run(ctx context.Context, env Env) error {
	if err := n.validate(); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(n.Steps))
	for _, s := range n.Steps {
		if s.WaitKey != "" && acquiredBy(ctx, env, s.WaitSlot, s.WaitKey) != nil {
			break // the run ended first
		}
		sleep(ctx, s.After)
		if ctx.Err() != nil {
			break
		}
		if err := n.strike(ctx, env, s, &wg, errs); err != nil {
			errs <- err
			break
		}
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}

// strike injects one step's fault and leaves its heal to a goroutine.
func (n *Plan) strike(ctx context.Context, env Env, s Step, wg *sync.WaitGroup, errs chan<- error) error {
	e, err := lookupFault(s.Fault)
	if err != nil {
		return err
	}
	sel := s.Target
	if sel == "" {
		sel = e.target
	}
	var stops <-chan workloads.Stop
	if s.Point != "" && env.Clients != nil {
		// Watch before arming: the client can stop at once.
		ch, cancel := env.Clients.WatchStops()
		defer cancel()
		stops = ch
	}
	t, err := resolve(ctx, env, sel, s.Key, s.On)
	if err == nil && s.Point != "" {
		t, err = stoppedAt(ctx, t, s.Point, stops)
	}
	if err != nil {
		return quiet(ctx, fmt.Errorf("fault %s: %w", s.Fault, err))
	}
	name := t.Name
	if s.By != 0 {
		name = fmt.Sprintf("%s by %s", name, s.By) // the size is part of what was done
	}
	w := &window{rec: env.Rec, fault: s.Fault, node: name}
	var heal Heal
	n.active.Add(1)
	ierr := w.step(history.FaultStart, func(ctx context.Context) error {
		var err error
		heal, err = e.fault.Inject(ctx, env, t, s.By)
		return err
	})
	// No heal: nothing was done, or nothing can be undone (a crash); the
	// window closes at once.
	instant := heal == nil
	if instant {
		heal = func(context.Context) error { return nil }
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if ierr == nil && !instant {
			hold := s.hold(env.TTL)
			if hold == 0 {
				hold = time.Duration(1<<63 - 1)
			}
			sleep(ctx, hold)
		}
		if err := w.step(history.FaultEnd, heal); err != nil {
			errs <- err
		}
		if n.active.Add(-1) == 0 {
			checkHealth(env, history.HealthAfter, s.Fault, name, w.id)
		}
	}()
	return ierr
}

// stoppedAt arms point on the target client and waits until it has
// stopped itself there; t then names the point too.
func stoppedAt(ctx context.Context, t Target, point string, stops <-chan workloads.Stop) (Target, error) {
	if t.Process == nil || stops == nil {
		return t, fmt.Errorf("a point inside the lock needs a client process, not %q", t.Name)
	}
	t.Process.Arm(point)
	for {
		select {
		case <-ctx.Done():
			return t, ctx.Err() // never reached: the run ended first
		case st := <-stops:
			if st.Proc == t.Process && st.Point == point {
				t.Name = fmt.Sprintf("%s at %s", t.Name, point)
				return t, t.Process.WaitState(ctx, "T")
			}
		}
	}
}

// quiet drops the error of a step that ended because its context did: the
// run ended before the fault's moment came.
func quiet(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
