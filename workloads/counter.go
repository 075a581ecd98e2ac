package workloads

import (
	"context"

	"github.com/redis/go-redis/v9"
)

func init() {
	Register(Kind{
		Name: "counter",
		Summary: "under the lock, read a register, work for a random time, write the value + 1; " +
			"lost updates = acknowledged increments minus the final value",
		Checkers:  []string{"lost-updates"},
		Resource:  true,
		NeedsKeys: true,
		FencedAs:  "fenced",
		New:       newCounter,
	})
}

// counter is a plain Redis string per lock key, written with SET ... GET.
func newCounter(c Config) Workload {
	reg := func(key string) string { return "counter:" + key }
	return &incrementer{
		keys: c.Keys,
		reset: func(ctx context.Context, rdb *redis.Client, key string) error {
			return rdb.Set(ctx, reg(key), 0, 0).Err()
		},
		get: func(ctx context.Context, rdb *redis.Client, key string) (int64, error) {
			return rdb.Get(ctx, reg(key)).Int64()
		},
		read:  func(l *Lease) []any { return []any{"GET", reg(l.Key)} },
		write: func(l *Lease, v int64) []any { return []any{"SET", reg(l.Key), v, "GET"} },
	}
}
