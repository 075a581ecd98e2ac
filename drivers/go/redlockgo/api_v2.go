//go:build deadbolt_driver && redlockgo_v2

package main

import (
	"context"
	"time"

	"github.com/amyangfei/redlock-go/v2/redlock"
)

// The calls whose signatures changed from v2 to v3 (api_v3.go).

// module is the library's module path, as its build info names it.
const module = "github.com/amyangfei/redlock-go/v2"

type redLock = redlock.RedLock

// newRedLock builds the RedLock (v2 takes no context).
func newRedLock(_ context.Context, addrs []string) (*redLock, error) {
	return redlock.NewRedLock(addrs)
}

// lockKey is Lock: the validity it says the lock has (v2: nanoseconds),
// or an error.
func lockKey(ctx context.Context, r *redLock, key string, ttl time.Duration) (time.Duration, error) {
	ns, err := r.Lock(ctx, key, ttl)
	return time.Duration(ns), err
}
