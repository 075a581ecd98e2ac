package workloads

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/history"
)

func init() {
	Register(Kind{
		Name: "orders",
		Summary: "a flash sale: a limited stock, one order per user, each purchase under the user's lock " +
			"lock:order:<user>; counts duplicate orders and oversold units",
		Checkers: []string{"orders"},
		Resource: true,
		New:      func(Config) Workload { return &orders{} },
	})
}

const (
	// Stock is what the sale starts with.
	Stock = 100
	// Users arrive in waves: each wave has usersPerWave users, and clients
	// buy for the current wave's users, so that several clients try to buy
	// for one user at once, as double-clicks and retries do. A wave lasts
	// two lease times (waveLength), at least shortestWave: a user whose lock
	// a failover lost is still wanted when the clients reach the new
	// master, so another client asks for that user there.
	usersPerWave = 3
	shortestWave = 500 * time.Millisecond
	// OrderKeyPrefix is the user lock's prefix, as in the seeds; the
	// orders checker reads the stock and the users' counts by these keys.
	OrderKeyPrefix = checker.OrderKeyPrefix
	stockKey       = checker.StockKey
	ordersKey      = "orders"
)

var buyScript = script("buy.lua")

// orders is the seeds' flash sale. The stock is decremented atomically,
// as a shop's conditional update is; "one order per user" is the
// application's check, read then act, made under the user's lock, so a
// double hold lets a user buy twice.
type orders struct{}

func (o *orders) Setup(ctx context.Context, h *Harness) error {
	if err := buyScript.Load(ctx, h.Resource).Err(); err != nil {
		return err
	}
	return h.Write(ctx, stockKey, Stock, func(ctx context.Context) error {
		_, err := h.Resource.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, stockKey, Stock, 0)
			p.Del(ctx, ordersKey)
			return nil
		})
		return err
	})
}

func (o *orders) Next(s *Session) string {
	wave := s.Now() / int64(waveLength(s.TTL()))
	return fmt.Sprintf("%su%d", OrderKeyPrefix, wave*usersPerWave+int64(s.Rand().IntN(usersPerWave)))
}

func (o *orders) Critical(_ context.Context, s *Session, l *Lease) {
	user := strings.TrimPrefix(l.Key, OrderKeyPrefix)
	var had int64
	_, t := s.Resource(history.Read, l, []any{"HGET", ordersKey, user}, nil, func(rep client.Reply, op *history.Op) {
		into(value)(rep, op)
		if op.Value != nil {
			had = *op.Value
		}
	})
	if t != history.OK || had > 0 {
		return // one order per user: the application refuses
	}
	s.Hold(s.Work(), l)
	if gone(s, l) {
		return
	}
	s.Resource(history.Order, l, []any{"EVALSHA", buyScript.Hash(), 2, stockKey, ordersKey, user}, nil,
		func(rep client.Reply, op *history.Op) {
			into(value)(rep, op)
			if op.Type == history.OK && (op.Value == nil || *op.Value == 0) {
				op.Type, op.Error, op.Value = history.Fail, "sold out", nil
			}
		})
}

// waveLength is how long one wave of users lasts under leases of ttl.
func waveLength(ttl time.Duration) time.Duration { return max(shortestWave, 2*ttl) }

// Final reads the stock left and every user's order count.
func (o *orders) Final(ctx context.Context, h *Harness) error {
	if _, err := h.Read(ctx, stockKey, func(ctx context.Context) (int64, error) {
		return h.Resource.Get(ctx, stockKey).Int64()
	}); err != nil {
		return err
	}
	users, err := h.Resource.HKeys(ctx, ordersKey).Result()
	if err != nil {
		return err
	}
	for _, u := range users {
		if _, err := h.Read(ctx, OrderKeyPrefix+u, func(ctx context.Context) (int64, error) {
			return h.Resource.HGet(ctx, ordersKey, u).Int64()
		}); err != nil {
			return err
		}
	}
	return nil
}
