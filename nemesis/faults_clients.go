package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// The faults on client processes and on the links between clients and
// nodes.
func init() {
	RegisterFault(FaultDecl{Name: "pause-client", Effects: Effects{OnClients: true, Stops: true}, Target: "holder", Summary: "SIGSTOP the client process, SIGCONT at the heal: a stop-the-world pause that freezes the lock's own timers with it",
		Fault: FaultFunc(func(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
			if t.Process == nil {
				return nil, fmt.Errorf("pause-client needs a client, not %q", t.Name)
			}
			return func(context.Context) error { return t.Process.Resume() }, t.Process.Pause()
		})})
	RegisterFault(FaultDecl{Name: "crash-client", Effects: Effects{OnClients: true, Kills: true, Instant: true}, Target: "holder", Summary: "SIGKILL the client process: it never releases, and a fresh process takes its place",
		Fault: FaultFunc(func(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
			if t.Process == nil {
				return nil, fmt.Errorf("crash-client needs a client, not %q", t.Name)
			}
			t.Process.Kill()
			return nil, nil // nothing to heal: the workload starts a fresh process
		})})
	RegisterFault(FaultDecl{Name: "link-delay", Effects: Effects{OnClients: true, DelaysReplies: true}, Target: "link:0:redis-1", Summary: "hold every reply from the nodes to the client back by the step's 'by' (requests pass at once); the heal lifts it",
		Needs: Needs{LinkFaults: true}, Size: linkDelaySize,
		Fault: FaultFunc(func(ctx context.Context, env Env, t Target, by time.Duration) (Heal, error) {
			if by <= 0 {
				return nil, fmt.Errorf("link-delay needs a positive 'by'")
			}
			return linkFault(env, t, func(l Link) error { return l.Delay(by) })
		})})
	RegisterFault(FaultDecl{Name: "link-cut", Effects: Effects{OnClients: true}, Target: "link:0:redis-1", Summary: "drop everything between the client and the nodes, both ways, with connections left open (a partition); the heal restores it",
		Needs: Needs{LinkFaults: true},
		Fault: FaultFunc(func(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
			return linkFault(env, t, func(l Link) error { return l.Cut() })
		})})
}

func linkFault(env Env, t Target, do func(Link) error) (Heal, error) {
	if len(t.Nodes) == 0 || t.Process != nil {
		return nil, fmt.Errorf("a link fault needs links (link:SLOT:NODES), not %q", t.Name)
	}
	var done []Link
	heal := func(ctx context.Context) error {
		for _, l := range done {
			l.Heal(ctx)
		}
		return nil
	}
	for _, n := range t.Nodes {
		l, err := env.Cluster.Link(t.Slot, n.Name())
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

// linkDelaySize is a random reply delay: one to two TTLs, so that a
// grant's reply arrives after its lease ran out.
func linkDelaySize(rng *rand.Rand, ttl time.Duration) time.Duration {
	return ttl + time.Duration(rng.Int64N(int64(ttl)+1))
}
