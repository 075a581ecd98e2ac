package nemesis

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
)

func init() {
	register("kill-minority", "independent",
		"SIGKILL a minority of the independent masters and restart them (empty) only after the lease TTL has passed",
		func(p Params) Nemesis { return &KillMinority{After: or(p.After, 3*time.Second), Margin: time.Second} })
}

// KillMinority kills floor((N-1)/2) masters chosen by the seed and restarts
// them once every lease they held has expired: antirez's delayed restart,
// which keeps RedLock safe without persistence.
type KillMinority struct {
	After time.Duration
	// Margin is added to the TTL before the restart.
	Margin time.Duration
}

func (n *KillMinority) Span(ttl time.Duration) time.Duration { return n.After + ttl + n.Margin }

func (n *KillMinority) Run(ctx context.Context, env Env) error {
	sleep(ctx, n.After)
	if ctx.Err() != nil {
		return nil
	}
	masters := env.Cluster.ByRole(cluster.RoleRedis)
	victims := make([]*cluster.Node, 0, len(masters))
	for _, i := range env.Rng.Perm(len(masters))[:(len(masters)-1)/2] {
		victims = append(victims, masters[i])
	}
	if len(victims) == 0 {
		return errors.New("kill-minority needs at least 3 masters")
	}
	var names []string
	for _, v := range victims {
		names = append(names, v.Name)
	}
	each := func(f func(*cluster.Node, context.Context) error) func(context.Context) error {
		return func(ctx context.Context) error {
			var wg sync.WaitGroup
			errs := make([]error, len(victims))
			for i, v := range victims {
				wg.Add(1)
				go func() { defer wg.Done(); errs[i] = f(v, ctx) }()
			}
			wg.Wait()
			return errors.Join(errs...)
		}
	}
	// An interrupted run cuts the wait short; its verdict does not count.
	hold := env.TTL + n.Margin
	return inject(ctx, env, "kill-minority", strings.Join(names, ","),
		each((*cluster.Node).Kill), each((*cluster.Node).Heal), hold)
}
