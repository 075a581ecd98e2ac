package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/topology"
)

// The node faults. Each one breaks every node of its target at once.
func init() {
	RegisterFault(FaultDecl{Name: "kill", Target: "minority", Effects: Effects{Silences: true, Kills: true}, Summary: "SIGKILL the nodes; the heal starts them again (what they keep depends on the cluster's persistence)",
		Fault: FaultFunc(func(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
			return undoOn(t, Node.Start), eachNode(ctx, t, Node.Kill)
		})})
	RegisterFault(FaultDecl{Name: "restart", Target: "minority", Effects: Effects{Silences: true, Kills: true}, Summary: "SIGKILL the nodes and start them again at once (antirez's case: a restart without persistence forgets the locks it granted)",
		Fault: FaultFunc(func(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
			err := eachNode(ctx, t, func(n Node, ctx context.Context) error {
				if err := n.Kill(ctx); err != nil {
					return err
				}
				return n.Start(ctx)
			})
			// A restart that failed halfway leaves a node down; starting it
			// again is the heal.
			return undoOn(t, Node.Heal), err
		})})
	RegisterFault(FaultDecl{Name: "pause-node", Target: "minority", Effects: Effects{KeepsKeys: true, Silences: true, Stops: true}, Summary: "freeze the nodes (docker pause): they answer nothing and keep their connections; the heal thaws them",
		Fault: FaultFunc(func(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
			return undoOn(t, Node.Resume), eachNode(ctx, t, Node.Pause)
		})})
	RegisterFault(FaultDecl{Name: "isolate-primary", Target: "primary", Effects: Effects{Silences: true, BetweenNodes: true}, Summary: "cut the node off from the other nodes and Sentinels while clients still reach it; the heal reconnects it",
		Fault: FaultFunc(isolate)})
	RegisterFault(FaultDecl{Name: "isolate-replica", Target: "replica", Effects: Effects{Silences: true, BetweenNodes: true}, Summary: "cut a replica off from its master and the Sentinels while clients still reach it; the heal reconnects it",
		Fault: FaultFunc(isolate)})
	RegisterFault(FaultDecl{Name: "clock-jump", Target: "node:redis-1", Effects: Effects{MovesClock: true}, Summary: "move the nodes' wall clocks by the step's 'by' (negative: back); keys with a TTL expire early or late there only; the heal sets them back",
		Needs: Needs{ClockFaults: true}, SignedBy: true, Size: clockJumpSize,
		Fault: FaultFunc(func(ctx context.Context, env Env, t Target, by time.Duration) (Heal, error) {
			if by == 0 {
				return nil, fmt.Errorf("clock-jump needs a non-zero 'by'")
			}
			heal := func(ctx context.Context) error {
				return eachNode(ctx, t, func(n Node, ctx context.Context) error { return n.SetClock(ctx, 0) })
			}
			return heal, eachNode(ctx, t, func(n Node, ctx context.Context) error { return n.SetClock(ctx, by) })
		})})
	RegisterFault(FaultDecl{Name: "kill-connections", Target: "primary", Effects: Effects{KeepsKeys: true, Instant: true}, Summary: "close every client connection of the nodes (CLIENT KILL TYPE normal): the server and its keys live on, and each client must reconnect; nothing to heal",
		ByCommand: true,
		Fault: FaultFunc(func(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
			return nil, eachNode(ctx, t, func(n Node, ctx context.Context) error {
				if _, err := n.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"); err != nil {
					return fmt.Errorf("%s: CLIENT KILL: %w", n.Name(), err)
				}
				return nil
			})
		})})
	RegisterFault(FaultDecl{Name: "sentinel-failover", Target: "sentinel", Effects: Effects{Promotes: history.PromotesAny}, Summary: "ask a Sentinel for a graceful failover (SENTINEL FAILOVER) and wait until another node is master",
		ByCommand: true,
		Fault:     FaultFunc(sentinelFailover)})
}

func isolate(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
	return undoOn(t, Node.Reconnect), eachNode(ctx, t, Node.Isolate)
}

// undoOn is the heal that runs undo on every node of t.
func undoOn(t Target, undo func(Node, context.Context) error) Heal {
	return func(ctx context.Context) error { return eachNode(ctx, t, undo) }
}

func sentinelFailover(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
	if len(t.Nodes) != 1 || t.Nodes[0].Role() != topology.RoleSentinel {
		return nil, fmt.Errorf("sentinel-failover asks one Sentinel, not %q", t.Name)
	}
	old, err := env.Cluster.Master(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := t.Nodes[0].Do(ctx, "SENTINEL", "FAILOVER", env.Cluster.GroupName()); err != nil {
		return nil, fmt.Errorf("SENTINEL FAILOVER: %w", err)
	}
	for {
		if m, err := env.Cluster.Master(ctx); err == nil && m.Name() != old.Name() {
			return func(context.Context) error { return nil }, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no new master after SENTINEL FAILOVER: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// clockJumpSize is a random clock jump: forward or back by one to three
// TTLs, so that leases expire early or late.
func clockJumpSize(rng *rand.Rand, ttl time.Duration) time.Duration {
	by := ttl + time.Duration(rng.Int64N(int64(2*ttl)+1))
	if rng.IntN(2) == 0 {
		by = -by
	}
	return by
}
