package nemesis

import (
	"context"
	"fmt"
	"time"
)

// The faults on client processes and on the links between clients and
// nodes.
func init() {
	registerFault("pause-client", "holder", "SIGSTOP the client process, SIGCONT at the heal: a stop-the-world pause that freezes the lock's own timers with it",
		FaultFunc(func(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
			if t.Process == nil {
				return nil, fmt.Errorf("pause-client needs a client, not %q", t.Name)
			}
			return func(context.Context) error { return t.Process.Resume() }, t.Process.Pause()
		}))
	registerFault("crash-client", "holder", "SIGKILL the client process: it never releases, and a fresh process takes its place",
		FaultFunc(func(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
			if t.Process == nil {
				return nil, fmt.Errorf("crash-client needs a client, not %q", t.Name)
			}
			t.Process.Kill()
			return nil, nil // nothing to heal: the workload starts a fresh process
		}))
	registerFault("link-delay", "link:0:redis-1", "hold every reply from the nodes to the client back by the step's 'by' (requests pass at once); the heal lifts it",
		FaultFunc(func(ctx context.Context, env Env, t Target, by time.Duration) (Heal, error) {
			if by <= 0 {
				return nil, fmt.Errorf("link-delay needs a positive 'by'")
			}
			return linkFault(env, t, func(l link) error { return l.Delay(by) })
		}))
	registerFault("link-cut", "link:0:redis-1", "drop everything between the client and the nodes, both ways, with connections left open (a partition); the heal restores it",
		FaultFunc(func(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
			return linkFault(env, t, func(l link) error { return l.Cut() })
		}))
}

type link interface {
	Delay(time.Duration) error
	Cut() error
	Heal(context.Context)
}

func linkFault(env Env, t Target, do func(link) error) (Heal, error) {
	if len(t.Nodes) == 0 || t.Process != nil {
		return nil, fmt.Errorf("a link fault needs links (link:SLOT:NODES), not %q", t.Name)
	}
	var done []link
	heal := func(ctx context.Context) error {
		for _, l := range done {
			l.Heal(ctx)
		}
		return nil
	}
	for _, n := range t.Nodes {
		l, err := env.Cluster.Link(t.Slot, n.Name)
		if err != nil {
			return heal, err
		}
		done = append(done, l)
		if err := do(l); err != nil {
			return heal, err
		}
	}
	return heal, nil
}
