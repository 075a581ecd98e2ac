package nemesis

import (
	"context"
	"fmt"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
)

// The faults a Redis Cluster's own commands make: a failover an operator
// asks for, and a slot moved to another master.
func init() {
	for _, mode := range []struct{ name, arg, summary string }{
		{"cluster-failover", "", "ask a replica of the primary key's slot master for a graceful CLUSTER FAILOVER (the master stops writes until the replica has caught up) and wait until it is master"},
		{"cluster-failover-force", "FORCE", "CLUSTER FAILOVER FORCE on a replica of the primary key's slot master: no handshake with the master, which keeps taking writes until it learns of the new epoch; wait until the replica is master"},
		{"cluster-failover-takeover", "TAKEOVER", "CLUSTER FAILOVER TAKEOVER on a replica of the primary key's slot master: it takes a new epoch without any vote; wait until it is master"},
	} {
		RegisterFault(FaultDecl{Name: mode.name, Target: "replica", Effects: Effects{Promotes: history.PromotesStruck}, Summary: mode.summary, Needs: Needs{Topology: OnCluster},
			Fault: FaultFunc(func(ctx context.Context, env Env, t Target, _ time.Duration) (Heal, error) {
				return clusterFailover(ctx, env, t, mode.arg)
			})})
	}
	RegisterFault(FaultDecl{Name: "migrate-slot", Target: "primary", Needs: Needs{Topology: OnCluster},
		Summary: "move the primary key's slot from its master to another master (CLUSTER SETSLOT IMPORTING/MIGRATING, MIGRATE key by key, 'by' apart, then SETSLOT NODE): clients meet ASK, then MOVED; the slot stays moved",
		Fault:   FaultFunc(migrateSlot)})
}

func clusterFailover(ctx context.Context, env Env, t Target, mode string) (Heal, error) {
	if len(t.Nodes) != 1 {
		return nil, fmt.Errorf("a cluster failover is asked of one replica, not %q", t.Name)
	}
	replica := t.Nodes[0]
	args := []any{"CLUSTER", "FAILOVER"}
	if mode != "" {
		args = append(args, mode)
	}
	if _, err := replica.Do(ctx, args...); err != nil {
		return nil, fmt.Errorf("%v on %s: %w", args, replica.Name(), err)
	}
	for {
		if m, err := env.Cluster.Master(ctx); err == nil && m.Name() == replica.Name() {
			return func(context.Context) error { return nil }, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s never became master after %v: %w", replica.Name(), args, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// migrateSlot moves the slot of the primary key from its master, the
// target, to another master chosen by the seed, as redis-cli --cluster
// reshard does, with 'by' between keys so that the migration takes a while
// and locks are taken and released through it.
func migrateSlot(ctx context.Context, env Env, t Target, by time.Duration) (Heal, error) {
	c := env.Cluster
	if len(t.Nodes) != 1 {
		return nil, fmt.Errorf("migrate-slot moves a slot away from one master, not %q", t.Name)
	}
	src := t.Nodes[0]
	var others []Node
	masters, err := c.Masters(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range masters {
		if m.Name() != src.Name() {
			others = append(others, m)
		}
	}
	if len(others) == 0 {
		return nil, fmt.Errorf("no other master to move the slot to")
	}
	dst := others[env.Rng.IntN(len(others))]
	slot, err := c.PrimarySlot()
	if err != nil {
		return nil, err
	}
	return func(context.Context) error { return nil }, c.MigrateSlot(ctx, slot, src, dst, by)
}
