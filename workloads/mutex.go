package workloads

import "context"

func init() {
	Register(Kind{
		Name:      "mutex",
		Summary:   "a plain critical section: lock a random key, hold it for a random time, release; no resource",
		NeedsKeys: true,
		New:       func(c Config) Workload { return &mutex{keys: c.Keys} },
	})
}

// mutex holds the lock and touches nothing: a run judges the lock service
// alone.
type mutex struct{ keys []string }

func (m *mutex) Setup(context.Context, *Harness) error { return nil }
func (m *mutex) Final(context.Context, *Harness) error { return nil }

func (m *mutex) Next(s *Session) string { return m.keys[s.Rand().IntN(len(m.keys))] }

func (m *mutex) Critical(_ context.Context, s *Session, l *Lease) { s.Hold(s.Work(), l) }
