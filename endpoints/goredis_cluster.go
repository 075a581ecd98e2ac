package endpoints

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// clusterClient is a lock user's go-redis client of a Redis Cluster. It
// follows MOVED and ASK as every cluster client must (up to go-redis's
// default 3 redirects), so it cannot have go-redis's retries off as the
// other clients do: the same loop retries a command after an EOF or a
// timeout. A retried SET NX whose first attempt took effect would come back
// "key exists" and be recorded as a refusal, so an attempt that may have
// run makes the command's outcome unknown, whatever a later attempt said
// (retryDoubt).
func (e Endpoints) clusterClient(o ClientOptions, d *Dialer) *redis.ClusterClient {
	c := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:                      e.ClusterNodes,
		Dialer:                     d.Dial,
		Username:                   e.Username,
		Password:                   e.Password,
		DialTimeout:                o.DialTimeout,
		ReadTimeout:                o.ReadTimeout,
		WriteTimeout:               o.WriteTimeout,
		PoolSize:                   o.PoolSize,
		DialerRetries:              1,
		ContextTimeoutEnabled:      true,
		ClusterStateReloadInterval: o.SlotRefresh,
		MaintNotificationsConfig:   &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	c.OnNewNode(func(node *redis.Client) { node.AddHook(attemptHook{}) })
	c.AddHook(retryDoubt{})
	return c
}

type attemptsKey struct{}

// attempts are the errors of each node attempt of one cluster command.
type attempts struct {
	mu   sync.Mutex
	errs []error
}

// processOnly passes dials and pipelines through: the hooks below watch
// single commands only.
type processOnly struct{}

func (processOnly) DialHook(next redis.DialHook) redis.DialHook { return next }
func (processOnly) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// attemptHook records each attempt the cluster client makes on a node.
type attemptHook struct{ processOnly }

func (attemptHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if a, ok := ctx.Value(attemptsKey{}).(*attempts); ok {
			a.mu.Lock()
			a.errs = append(a.errs, err)
			a.mu.Unlock()
		}
		return err
	}
}

// retryDoubt turns the outcome of a command that go-redis retried after an
// attempt that may have run into an error that leaves it unknown.
type retryDoubt struct{ processOnly }

func (retryDoubt) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		a := &attempts{}
		err := next(context.WithValue(ctx, attemptsKey{}, a), cmd)
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, earlier := range a.errs[:max(len(a.errs)-1, 0)] {
			if MayHaveRun(earlier) {
				err = fmt.Errorf("go-redis retried %s after an attempt that may have taken effect (%v); the last attempt gave %v", cmd.Name(), earlier, last(err))
				cmd.SetErr(err)
				return err
			}
		}
		return err
	}
}

func last(err error) any {
	if err == nil {
		return "a reply"
	}
	return err
}

// MayHaveRun reports an error after which the command may have reached
// Redis and run: not a Redis error reply (a reply, MOVED and CLUSTERDOWN
// among them, says what happened) and not a failed dial.
func MayHaveRun(err error) bool {
	if err == nil || errors.Is(err, redis.ErrPoolTimeout) {
		return false
	}
	var reply redis.Error
	if errors.As(err, &reply) {
		return false
	}
	var op *net.OpError
	return !errors.As(err, &op) || op.Op != "dial"
}
