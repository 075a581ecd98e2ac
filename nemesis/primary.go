package nemesis

import (
	"context"
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
)

func init() {
	register("isolate-primary", "sentinel",
		"cut the master off from its replicas and Sentinels (clients still reach it) until Sentinel promotes a replica, then heal",
		func(p Params) Nemesis {
			return &PrimaryFault{Fault: "isolate-primary", Do: (*cluster.Node).Isolate, After: or(p.After, 3*time.Second), For: or(p.For, 8*time.Second)}
		})
	register("kill-primary", "sentinel",
		"SIGKILL the master, let Sentinel promote a replica, restart the old master (empty: no persistence)",
		func(p Params) Nemesis {
			return &PrimaryFault{Fault: "kill-primary", Do: (*cluster.Node).Kill, After: or(p.After, 3*time.Second), For: or(p.For, 8*time.Second)}
		})
}

// PrimaryFault breaks whichever node Sentinel calls master and heals it
// later. Isolation is the asynchronous-replication split brain: clients can
// still write to the old master while a replica is promoted.
type PrimaryFault struct {
	Fault string
	Do    func(*cluster.Node, context.Context) error
	After time.Duration
	// For is how long the fault lasts; it must outlast Sentinel's
	// down-after and election for a failover to happen.
	For time.Duration
}

func (n *PrimaryFault) Span(time.Duration) time.Duration { return n.After + n.For }

func (n *PrimaryFault) Run(ctx context.Context, env Env) error {
	sleep(ctx, n.After)
	if ctx.Err() != nil {
		return nil
	}
	master, err := env.Cluster.Master(ctx)
	if err != nil {
		return err
	}
	do := func(ctx context.Context) error { return n.Do(master, ctx) }
	return inject(ctx, env, n.Fault, master.Name, do, master.Heal, n.For)
}
