package nemesis

import (
	"context"
	"fmt"
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
)

// The node faults. Each one breaks every node of its target at once.
func init() {
	registerFault("kill", "minority", "SIGKILL the nodes; the heal starts them again (what they keep depends on the cluster's persistence)",
		FaultFunc(func(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
			return undoOn(t, (*cluster.Node).Start), eachNode(ctx, t, (*cluster.Node).Kill)
		}))
	registerFault("restart", "minority", "SIGKILL the nodes and start them again at once (antirez's case: a restart without persistence forgets the locks it granted)",
		FaultFunc(func(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
			err := eachNode(ctx, t, func(n *cluster.Node, ctx context.Context) error {
				if err := n.Kill(ctx); err != nil {
					return err
				}
				return n.Start(ctx)
			})
			// A restart that failed halfway leaves a node down; starting it
			// again is the heal.
			return undoOn(t, (*cluster.Node).Heal), err
		}))
	registerFault("pause-node", "minority", "freeze the nodes (docker pause): they answer nothing and keep their connections; the heal thaws them",
		FaultFunc(func(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
			return undoOn(t, (*cluster.Node).Resume), eachNode(ctx, t, (*cluster.Node).Pause)
		}))
	registerFault("isolate-primary", "primary", "cut the node off from the other nodes and Sentinels while clients still reach it; the heal reconnects it",
		FaultFunc(isolate))
	registerFault("isolate-replica", "replica", "cut a replica off from its master and the Sentinels while clients still reach it; the heal reconnects it",
		FaultFunc(isolate))
	registerFault("clock-jump", "node:redis-1", "move the nodes' wall clocks by the step's 'by' (negative: back); keys with a TTL expire early or late there only; the heal sets them back",
		FaultFunc(func(ctx context.Context, env Env, t Target, by time.Duration) (Heal, error) {
			if by == 0 {
				return nil, fmt.Errorf("clock-jump needs a non-zero 'by'")
			}
			heal := func(ctx context.Context) error {
				return eachNode(ctx, t, func(n *cluster.Node, ctx context.Context) error { return n.SetClock(ctx, 0) })
			}
			return heal, eachNode(ctx, t, func(n *cluster.Node, ctx context.Context) error { return n.SetClock(ctx, by) })
		}))
	registerFault("kill-connections", "primary", "close every client connection of the nodes (CLIENT KILL TYPE normal): the server and its keys live on, and each client must reconnect; nothing to heal",
		FaultFunc(func(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
			return nil, eachNode(ctx, t, func(n *cluster.Node, ctx context.Context) error {
				rdb := n.PatientClient()
				defer rdb.Close()
				if err := rdb.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
					return fmt.Errorf("%s: CLIENT KILL: %w", n.Name, err)
				}
				return nil
			})
		}))
	registerFault("sentinel-failover", "sentinel", "ask a Sentinel for a graceful failover (SENTINEL FAILOVER) and wait until another node is master",
		FaultFunc(sentinelFailover))
}

func isolate(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
	return undoOn(t, (*cluster.Node).Reconnect), eachNode(ctx, t, (*cluster.Node).Isolate)
}

// undoOn is the heal that runs undo on every node of t.
func undoOn(t Target, undo func(*cluster.Node, context.Context) error) Heal {
	return func(ctx context.Context) error { return eachNode(ctx, t, undo) }
}

func sentinelFailover(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
	if len(t.Nodes) != 1 || t.Nodes[0].Role != cluster.RoleSentinel {
		return nil, fmt.Errorf("sentinel-failover asks one Sentinel, not %q", t.Name)
	}
	old, err := env.Cluster.Master(ctx)
	if err != nil {
		return nil, err
	}
	s := t.Nodes[0].PatientClient()
	defer s.Close()
	if err := s.Do(ctx, "SENTINEL", "FAILOVER", env.Cluster.GroupName()).Err(); err != nil {
		return nil, fmt.Errorf("SENTINEL FAILOVER: %w", err)
	}
	for {
		if m, err := env.Cluster.Master(ctx); err == nil && m.Name != old.Name {
			return func(context.Context) error { return nil }, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no new master after SENTINEL FAILOVER: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
