package nemesis

import (
	"context"
	"time"
)

func init() {
	register("none", "", "no fault: the lock's own behaviour (expiry, release) under contention", func(Params) Nemesis { return None{} })
}

// None injects nothing. Scenarios that test a lock's expiry and release
// logic use it, so that whatever they find is the lock's own doing.
type None struct{}

func (None) Span(time.Duration) time.Duration { return 0 }

func (None) Run(context.Context, Env) error { return nil }
