package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go/wait"
)

// pingReady waits until the node answers PING on its published port. Log
// lines would match the previous start's "Ready to accept connections" after
// a restart, and the port checks of testcontainers need a shell the scratch
// image does not have.
type pingReady struct {
	addr string
	// username and password are the harness's (AdminUser).
	username, password string
	timeout            time.Duration
}

var _ wait.Strategy = pingReady{}

func (p pingReady) WaitUntilReady(ctx context.Context, _ wait.StrategyTarget) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	return pingUntil(ctx, p.addr, p.username, p.password)
}

func pingUntil(ctx context.Context, addr, username, password string) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr, Username: username, Password: password,
		MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second, PoolSize: 1})
	defer rdb.Close()
	var err error
	for {
		if err = rdb.Ping(ctx).Err(); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer PING: %v", addr, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
