package nemesis

import (
	"context"
	"time"
)

func init() {
	register("isolate-primary", "sentinel",
		"cut the master off from its replicas and Sentinels (clients still reach it) until Sentinel promotes a replica, then heal",
		func() Nemesis { return &IsolatePrimary{After: 3 * time.Second, For: 8 * time.Second} })
}

// IsolatePrimary splits the current master from the rest of its group while
// clients can still write to it: the asynchronous-replication split brain.
type IsolatePrimary struct {
	After time.Duration
	// For is how long the master stays cut off; it must outlast Sentinel's
	// down-after and election for a failover to happen.
	For time.Duration
}

func (n *IsolatePrimary) Span(time.Duration) time.Duration { return n.After + n.For }

func (n *IsolatePrimary) Run(ctx context.Context, env Env) error {
	sleep(ctx, n.After)
	if ctx.Err() != nil {
		return nil
	}
	master, err := env.Cluster.Master(ctx)
	if err != nil {
		return err
	}
	return inject(ctx, env, "isolate-primary", master.Name, master.Isolate, master.Heal, n.For)
}
