package workloads

import (
	"context"

	"github.com/redis/go-redis/v9"
)

func init() {
	Register(Kind{
		Name: "fenced",
		Summary: "the counter behind a fencing-aware register: every read and write carries the lease's fencing token, " +
			"and a token lower than the highest seen is rejected (a lock without tokens runs unfenced, and says so)",
		Checkers:  []string{"lost-updates", "fencing"},
		Resource:  true,
		NeedsKeys: true,
		New:       newFenced,
	})
}

var (
	fencedReadScript  = script("fenced_read.lua")
	fencedWriteScript = script("fenced_write.lua")
)

// fenced is Kleppmann's remedy: the resource itself refuses a holder whose
// token is older than one it has already seen. It checks reads too, or a
// stale holder could still write between a new holder's read and write.
func newFenced(c Config) Workload {
	reg := func(key string) string { return "fenced:" + key }
	return &incrementer{
		keys:    c.Keys,
		scripts: []*redis.Script{fencedReadScript, fencedWriteScript},
		fenced:  true,
		reset: func(ctx context.Context, rdb *redis.Client, key string) error {
			return rdb.HSet(ctx, reg(key), "value", 0, "fence", 0).Err()
		},
		get: func(ctx context.Context, rdb *redis.Client, key string) (int64, error) {
			return rdb.HGet(ctx, reg(key), "value").Int64()
		},
		read: func(l *Lease) []any {
			return []any{"EVALSHA", fencedReadScript.Hash(), 1, reg(l.Key), l.Fence}
		},
		write: func(l *Lease, v int64) []any {
			return []any{"EVALSHA", fencedWriteScript.Hash(), 1, reg(l.Key), l.Fence, v}
		},
	}
}
