//go:build deadbolt_driver && !redlockgo_v2

package main

import (
	"context"
	"time"

	"github.com/amyangfei/redlock-go/v3/redlock"
)

// The calls whose signatures changed from v2 to v3 (api_v2.go, built
// with the tag redlockgo_v2).

// module is the library's module path, as its build info names it.
const module = "github.com/amyangfei/redlock-go/v3"

type redLock = redlock.RedLock

// newRedLock builds the RedLock; its kv cache's collector lives as long
// as ctx.
func newRedLock(ctx context.Context, addrs []string) (*redLock, error) {
	return redlock.NewRedLock(ctx, addrs)
}

// lockKey is Lock: the validity it says the lock has, or an error.
func lockKey(ctx context.Context, r *redLock, key string, ttl time.Duration) (time.Duration, error) {
	return r.Lock(ctx, key, ttl)
}
