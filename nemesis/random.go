package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

func init() {
	RegisterSchedule(ScheduleDecl{Name: "random",
		Summary: "a seeded mix of the chosen faults (--faults), one at a time, each on a seed-chosen target for a seeded time, at seeded intervals",
		New:     func(p Params) Nemesis { return &Random{P: p} }, Takes: []string{"faults", "every", "after", "for"}})
}

// Random is the soak schedule: until the run ends it waits a seeded gap,
// picks one of its faults, aims it at a target the seed chooses, holds it
// for a seeded time and heals it before the next. The seed fixes the
// sequence of faults, targets and durations, not the machine's timing.
type Random struct{ P Params }

// Every is the mean gap between faults, For their mean length, both by
// default twice the TTL: long enough for a lease to run out under a fault.
func (n *Random) every(ttl time.Duration) time.Duration { return or(n.P.Every, 2*ttl) }
func (n *Random) hold(ttl time.Duration) time.Duration  { return or(n.P.For, 2*ttl) }

// Span is the start: the schedule itself lasts as long as the run.
func (n *Random) Span(time.Duration) time.Duration { return n.P.After }

// randomTarget is the seed-chosen counterpart of a fault's default target,
// by the target's kind (a fault may declare its own: FaultDecl).
func randomTarget(def string) string {
	kind, _, _ := strings.Cut(def, ":")
	switch kind {
	case "node":
		return "minority"
	case "holder", "client":
		return "client:*"
	case "link":
		return "link:*:minority"
	}
	return def
}

func (n *Random) validate() error {
	if len(n.P.Faults) == 0 {
		return fmt.Errorf("nemesis random needs at least one fault (--faults; see `deadbolt faults`)")
	}
	for _, f := range n.P.Faults {
		if _, err := lookupFault(f); err != nil {
			return err
		}
	}
	return nil
}

func (n *Random) Run(ctx context.Context, env Env) error {
	if err := n.validate(); err != nil {
		return err
	}
	env.begin()
	sleep(ctx, n.P.After)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	var all []error
	plan := &Plan{}
	for drawn := 0; ctx.Err() == nil; drawn++ {
		sleep(ctx, jitter(env.Rng, n.every(env.TTL)))
		if ctx.Err() != nil {
			break
		}
		s := n.step(env)
		strike := func() error { return plan.strike(ctx, env, drawn, s, false, nil, &wg, errs) }
		if f, ok := faults[s.Fault].fault.(inOp); ok {
			s.Strikes = 1 // one request at a time, as every random fault
			strike = func() error { return plan.series(ctx, env, drawn, s, false, f, &wg, errs) }
		}
		if err := strike(); err != nil {
			all = append(all, err)
		}
		wg.Wait() // one fault at a time: each heals before the next
		for len(errs) > 0 {
			all = append(all, <-errs)
		}
	}
	return errors.Join(all...)
}

// step draws the next fault of a run.
func (n *Random) step(env Env) Step { return n.Draw(env.Rng, env.TTL) }

// Draw is the next fault the schedule strikes, drawn from rng for leases
// of ttl: which fault, on what (its declared random target), for how long,
// by how much (its declared Size).
func (n *Random) Draw(rng *rand.Rand, ttl time.Duration) Step {
	name := n.P.Faults[rng.IntN(len(n.P.Faults))]
	e := faults[name]
	s := Step{Fault: name, Target: e.randomTarget(), For: jitter(rng, n.hold(ttl))}
	if e.decl.Size != nil {
		s.By = e.decl.Size(rng, ttl)
	}
	return s
}

// jitter is d scaled by a seeded factor in [0.5, 1.5).
func jitter(rng *rand.Rand, d time.Duration) time.Duration {
	return d/2 + time.Duration(rng.Int64N(int64(d)+1))
}
