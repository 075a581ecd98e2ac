//go:build !redsync4_goredis8

package redsyncadapter

import (
	"context"
	"errors"
	"time"

	rsredis "github.com/go-redsync/redsync/v4/redis"
	rsgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredis "github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/locks/clients/goredis9"
)

// From v4.8.1 redsync's README builds go-redis v9 clients
// (redsync/v4/redis/goredis/v9).

func clientKnobs() locks.Knobs { return goredis9.Knobs() }

// clients are the go-redis clients behind the pools, one per master group.
type clients struct {
	pools []rsredis.Pool
	c     []*goredis.Client
	// rounds tells the tries of an acquire apart by its SET NX commands.
	rounds locks.Rounds
	// contextCuts: a command's context deadline cuts its reads
	// (go-redis v9: only with ContextTimeoutEnabled).
	contextCuts bool
}

// newClients builds one go-redis v9 client per master group, as a user of
// redsync's v9 pool does: a failover client on Sentinel, one client per
// independent master, with the knobs the user changed.
func newClients(e endpoints.Endpoints, s locks.Settings) *clients {
	d := e.Dialer()
	cfg := goredis9.ConfigOf(s)
	out := &clients{}
	if e.Topology == endpoints.Sentinel {
		o := &goredis.FailoverOptions{MasterName: e.MasterName, SentinelAddrs: e.Sentinels, Dialer: d.Dial,
			Username: e.Username, Password: e.Password, SentinelUsername: e.SentinelUsername, SentinelPassword: e.SentinelPassword}
		cfg.Failover(o)
		out.c = []*goredis.Client{goredis.NewFailoverClient(o)}
	} else {
		for _, m := range e.Masters {
			o := &goredis.Options{Addr: m, Dialer: d.Dial, Username: e.Username, Password: e.Password}
			cfg.Client(o)
			out.c = append(out.c, goredis.NewClient(o))
		}
	}
	out.contextCuts = out.c[0].Options().ContextTimeoutEnabled
	for _, c := range out.c {
		c.AddHook(tryHook{&out.rounds})
		out.pools = append(out.pools, rsgoredis.NewPool(c))
	}
	return out
}

func (c *clients) behaviour() locks.Behaviour { return goredis9.Behaviour(c.c[0]) }

func (c *clients) longest() (time.Duration, bool) { return goredis9.SendsOf(c.c[0]).Longest() }

func (c *clients) close() error {
	var errs []error
	for _, x := range c.c {
		errs = append(errs, x.Close())
	}
	return errors.Join(errs...)
}

// tryHook tells rounds each command before it is sent, changing nothing.
type tryHook struct{ r *locks.Rounds }

func (tryHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h tryHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		h.r.Sent(ctx, isSetNX(cmd.Args()))
		return next(ctx, cmd)
	}
}

func (tryHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}
