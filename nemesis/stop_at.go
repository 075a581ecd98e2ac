package nemesis

import (
	"context"
	"errors"
	"fmt"
	"time"
)

func init() {
	register("pause-at", "",
		"stop a client inside the lock at a named point (such as between GET and DEL) for longer than the TTL, then resume it",
		func(p Params) Nemesis { return &StopAt{P: p} })
	register("crash-at", "",
		"stop a client inside the lock at a named point (such as between SETNX and EXPIRE) and kill it there",
		func(p Params) Nemesis { return &StopAt{P: p, Crash: true} })
}

// StopAt arms a named point on the victim: the driver stops itself there
// (SIGSTOP raised on its own thread) and the schedule resumes it after the
// pause, or kills it, as a crash at the worst moment.
type StopAt struct {
	P     Params
	Crash bool
}

func (n *StopAt) name() string {
	if n.Crash {
		return "crash-at"
	}
	return "pause-at"
}

func (n *StopAt) hold(ttl time.Duration) time.Duration {
	if n.Crash {
		return 0
	}
	return or(n.P.For, 2*ttl)
}

func (n *StopAt) Span(ttl time.Duration) time.Duration { return n.P.After + n.hold(ttl) }

func (n *StopAt) Run(ctx context.Context, env Env) error {
	if n.P.Point == "" {
		return errors.New(n.name() + " needs a point")
	}
	sleep(ctx, n.P.After)
	if env.Clients == nil {
		return errors.New("this run has no client processes to fault")
	}
	// Watch before arming: the stop can come at once. A stop nobody waits
	// for any longer is resumed by the workload itself.
	stops, cancel := env.Clients.WatchStops()
	defer cancel()
	_, proc, err := victim(ctx, env, n.P)
	if err != nil {
		return quiet(ctx, err)
	}
	proc.Arm(n.P.Point)
	for {
		select {
		case <-ctx.Done():
			return nil // never reached: the run ended first
		case st := <-stops:
			if st.Proc != proc || st.Point != n.P.Point {
				continue
			}
			undo := func(context.Context) error { return proc.Resume() }
			if n.Crash {
				undo = func(context.Context) error { proc.Kill(); return nil }
			}
			return inject(ctx, env, n.name(), fmt.Sprintf("process %d at %s", st.Process, st.Point),
				func(ctx context.Context) error { return proc.WaitState(ctx, "T") }, undo, n.hold(env.TTL))
		}
	}
}
