package main

import (
	"context"

	"github.com/deadbolt-lab/deadbolt/workloads"
)

// The workload: every client takes the first key every time, holds it for
// the session's work time and releases it, all contention on one key,
// judged by the lock service's checkers and by long-holds (checker.go).
// One file, one registration.
func init() {
	workloads.Register(workloads.Kind{
		Name:      "first-key",
		Summary:   "EXAMPLE: every client locks the first key, holds it for a random time and releases",
		Checkers:  []string{"long-holds"},
		NeedsKeys: true,
		New:       func(c workloads.Config) workloads.Workload { return firstKey{key: c.Keys[0]} },
	})
}

type firstKey struct{ key string }

func (w firstKey) Setup(context.Context, *workloads.Harness) error { return nil }
func (w firstKey) Final(context.Context, *workloads.Harness) error { return nil }
func (w firstKey) Next(*workloads.Session) string                  { return w.key }
func (w firstKey) Critical(_ context.Context, s *workloads.Session, l *workloads.Lease) {
	s.Hold(s.Work(), l)
}
