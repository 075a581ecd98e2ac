package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// The fault: the nodes stutter, frozen for the step's 'by' and thawed
// again within the strike; nothing is left to heal. One file, one
// registration, and what it does declared with it: the checkers and the
// explorer read the effects, never the name.
func init() {
	nemesis.RegisterFault(nemesis.FaultDecl{
		Name:    "stutter",
		Summary: "EXAMPLE: freeze the nodes for the step's 'by' (a short stall), then thaw them; nothing to heal",
		Target:  "minority",
		Size:    func(_ *rand.Rand, ttl time.Duration) time.Duration { return ttl / 4 },
		Effects: nemesis.Effects{KeepsKeys: true, Stops: true, Instant: true},
		Fault: nemesis.FaultFunc(func(ctx context.Context, _ nemesis.Env, t nemesis.Target, by time.Duration) (nemesis.Heal, error) {
			if by <= 0 {
				return nil, errors.New("stutter needs a positive 'by'")
			}
			var errs []error
			for _, n := range t.Nodes {
				errs = append(errs, n.Pause(ctx))
			}
			time.Sleep(by)
			for _, n := range t.Nodes {
				errs = append(errs, n.Resume(ctx))
			}
			return nil, errors.Join(errs...)
		}),
	})
}
