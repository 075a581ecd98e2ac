package cluster

import (
	"time"

	"github.com/redis/go-redis/v9"
)

// ClientOptions are the go-redis settings every harness client uses. A
// paused or cut-off node hangs rather than refuses, so every call is bounded,
// and go-redis must not retry: a retried SET NX whose first attempt took
// effect would come back "key exists" and be recorded as a failed acquire.
type ClientOptions struct {
	DialTimeout  time.Duration
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	PoolSize     int
	// SentinelOnDial makes a Sentinel topology's client ask the Sentinels
	// for the master only when it dials a connection, as redis-py and many
	// other libraries do, instead of following Sentinel's +switch-master
	// as go-redis's failover client does. Pooled connections stay on the
	// old master until it drops them or answers READONLY (go-redis then
	// closes the connection), so such a client meets a failover only when
	// the old master is demoted.
	SentinelOnDial bool
}

// DefaultClientOptions keeps timeouts far below any lease time a scenario uses.
func DefaultClientOptions() ClientOptions {
	return ClientOptions{
		DialTimeout:  500 * time.Millisecond,
		ReadTimeout:  500 * time.Millisecond,
		WriteTimeout: 500 * time.Millisecond,
		PoolSize:     4,
	}
}

func (o ClientOptions) redis() *redis.Options {
	return &redis.Options{
		DialTimeout:  o.DialTimeout,
		ReadTimeout:  o.ReadTimeout,
		WriteTimeout: o.WriteTimeout,
		PoolSize:     o.PoolSize,
		MaxRetries:   -1,
		// One dial, not five with backoff: a refused connection is then a
		// prompt failure (nothing sent), not a timeout recorded as info.
		DialerRetries: 1,
		// Without this go-redis ignores context deadlines during I/O, and a
		// lock's per-call timeout would not bound anything.
		ContextTimeoutEnabled: true,
	}
}

func (o ClientOptions) failover(master string, sentinels []string) *redis.FailoverOptions {
	return &redis.FailoverOptions{
		MasterName:            master,
		SentinelAddrs:         sentinels,
		DialTimeout:           o.DialTimeout,
		ReadTimeout:           o.ReadTimeout,
		WriteTimeout:          o.WriteTimeout,
		PoolSize:              o.PoolSize,
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
	}
}
