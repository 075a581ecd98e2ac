package nemesis

import (
	"context"
	"time"
)

func init() {
	register("kill-primary", "sentinel",
		"SIGKILL the master, let Sentinel promote a replica, restart the old master (empty: no persistence)",
		func() Nemesis { return &KillPrimary{After: 3 * time.Second, For: 8 * time.Second} })
}

// KillPrimary kills the current master and restarts it later.
type KillPrimary struct {
	After time.Duration
	For   time.Duration
}

func (n *KillPrimary) Span(time.Duration) time.Duration { return n.After + n.For }

func (n *KillPrimary) Run(ctx context.Context, env Env) error {
	sleep(ctx, n.After)
	if ctx.Err() != nil {
		return nil
	}
	master, err := env.Cluster.Master(ctx)
	if err != nil {
		return err
	}
	return inject(ctx, env, "kill-primary", master.Name, master.Kill, master.Heal, n.For)
}
