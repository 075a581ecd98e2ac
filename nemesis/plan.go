package nemesis

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
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
	// Key is the key whose holder the holder target means.
	Key string `json:"key,omitempty"`
	// WaitKey, when set, holds the step back until client slot WaitSlot's
	// (any client's, with AnySlot) acquire of WaitKey is ok: the workload
	// event the fault is aimed at.
	WaitKey  string `json:"wait_key,omitempty"`
	WaitSlot int    `json:"wait_slot,omitempty"`
	// After is how long after the previous step struck (and the wait) this
	// one strikes.
	After time.Duration `json:"after,omitempty"`
	// For is how long the fault lasts; 0 keeps it until the run ends.
	For time.Duration `json:"for,omitempty"`
	// OutlastTTL adds the lease TTL to For, so every lease the target
	// granted has expired by the heal (antirez's delayed restart).
	OutlastTTL bool `json:"outlast_ttl,omitempty"`
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
	if s.After < 0 || s.For < 0 || s.WaitSlot < AnySlot {
		return fmt.Errorf("fault %s: negative after, for or wait slot", s.Fault)
	}
	return nil
}

// AnySlot as a step's WaitSlot waits for any client's acquire.
const AnySlot = -1

// Plan runs its steps in order; each heals on its own schedule, so faults
// overlap as the steps say. Everything is healed before Run returns.
type Plan struct{ Steps []Step }

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
	if s.OutlastTTL {
		return ttl + s.For
	}
	return s.For
}

func (n *Plan) validate() error {
	if len(n.Steps) == 0 {
		return errors.New("nemesis plan needs at least one step")
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
	t, err := resolve(ctx, env, sel, s.Key)
	if err != nil {
		return quiet(ctx, fmt.Errorf("fault %s: %w", s.Fault, err))
	}
	name := t.Name
	if s.By != 0 {
		name = fmt.Sprintf("%s by %s", name, s.By) // the size is part of what was done
	}
	w := &window{rec: env.Rec, fault: s.Fault, node: name}
	var heal Heal
	ierr := w.step(history.FaultStart, func(ctx context.Context) error {
		var err error
		heal, err = e.fault.Inject(ctx, env, t, s.By)
		return err
	})
	if heal == nil {
		// Nothing was done, so nothing to undo; the window still closes.
		heal = func(context.Context) error { return nil }
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if ierr == nil {
			hold := s.hold(env.TTL)
			if hold == 0 {
				hold = time.Duration(1<<63 - 1)
			}
			sleep(ctx, hold)
		}
		if err := w.step(history.FaultEnd, heal); err != nil {
			errs <- err
		}
	}()
	return ierr
}
