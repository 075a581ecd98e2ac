package nemesis

import (
	"context"
	"fmt"
	"time"
)

func init() {
	register("pause-client", "",
		"SIGSTOP a client process (the holder of a key the moment it holds it, or a named client) for longer than the TTL, then SIGCONT: "+
			"a stop-the-world pause that freezes the lock's own timers with it",
		func(p Params) Nemesis { return &PauseClient{P: p} })
}

// PauseClient is Kleppmann's GC pause: the holder stops, its lease runs out
// while it sleeps, another client takes the lock, and the sleeper wakes up
// believing it still holds it.
type PauseClient struct{ P Params }

// pause is how long the victim stays stopped: by default twice the TTL.
func (n *PauseClient) pause(ttl time.Duration) time.Duration { return or(n.P.For, 2*ttl) }

func (n *PauseClient) Span(ttl time.Duration) time.Duration { return n.P.After + n.pause(ttl) }

func (n *PauseClient) Run(ctx context.Context, env Env) error {
	sleep(ctx, n.P.After)
	id, proc, err := victim(ctx, env, n.P)
	if err != nil {
		return quiet(ctx, err)
	}
	return inject(ctx, env, "pause-client", fmt.Sprintf("process %d", id),
		func(context.Context) error { return proc.Pause() },
		func(context.Context) error { return proc.Resume() },
		n.pause(env.TTL))
}

// quiet drops the error of a schedule that ended because its context did:
// the run ended before the fault's moment came.
func quiet(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
