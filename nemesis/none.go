package nemesis

import (
	"context"
	"time"
)

func init() {
	register("none", "", "no fault: the lock's own behaviour (expiry, release) under contention", func(Params) Nemesis { return None{} }, []string{})
}

// None injects nothing. Scenarios that test a lock's expiry and release
// logic use it, so that whatever they find is the lock's own doing.
type None struct{}

func (None) Span(time.Duration) time.Duration { return 0 }

func (None) Run(context.Context, Env) error { return nil }

// Idle: None strikes nothing, so a run of it opens no fault window and
// needs no health check around one.
func (None) Idle() bool { return true }

// Idle reports a schedule that declares it strikes nothing (its Nemesis
// has an Idle method that says so); an unknown name is not idle.
func Idle(name string) bool {
	n, err := New(name, Params{})
	if err != nil {
		return false
	}
	i, ok := n.(interface{ Idle() bool })
	return ok && i.Idle()
}
