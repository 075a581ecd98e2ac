package nemesis

import (
	"context"
	"fmt"
	"time"
)

func init() {
	register("crash-client", "",
		"SIGKILL a client process (the holder of a key the moment it holds it, or a named client): it never releases, "+
			"and a fresh process takes its place",
		func(p Params) Nemesis { return &CrashClient{P: p} })
}

// CrashClient kills a client outright: nothing it would do on the way out,
// such as a deferred release, happens; only the lock's TTL frees the key.
type CrashClient struct{ P Params }

func (n *CrashClient) Span(time.Duration) time.Duration { return n.P.After }

func (n *CrashClient) Run(ctx context.Context, env Env) error {
	sleep(ctx, n.P.After)
	id, proc, err := victim(ctx, env, n.P)
	if err != nil {
		return quiet(ctx, err)
	}
	// The workload replaces the process itself; there is nothing to heal.
	return inject(ctx, env, "crash-client", fmt.Sprintf("process %d", id),
		func(context.Context) error { proc.Kill(); return nil },
		func(context.Context) error { return nil }, 0)
}
