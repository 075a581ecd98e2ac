package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

// buy: lease holds user u's lock, reads no order, and buys.
func buy(b *builder, p int, u, lease string, inv, ttl int64) *builder {
	key := OrderKeyPrefix + u
	return b.acquire(p, key, lease, inv, inv+ms(5), ttl, 0).
		read(p, key, lease, 0, inv+ms(6), inv+ms(7)).
		order(history.OK, p, key, lease, inv+ms(8), inv+ms(9))
}

func TestCleanSale(t *testing.T) {
	b := newHistory().setup(StockKey, 10, 0)
	buy(b, 1, "u1", "a", ms(10), ms(100))
	buy(b, 2, "u2", "b", ms(10), ms(100))
	r := run(t, "orders", b.final(StockKey, 8, ms(500)).final(OrderKeyPrefix+"u1", 1, ms(500)).final(OrderKeyPrefix+"u2", 1, ms(500)).build())
	assert.Equal(t, Valid, r.Verdict, r.Reason)
	assert.Equal(t, int64(2), r.Metrics["units_sold"])
}

func TestDuplicateOrderIsFlagged(t *testing.T) {
	b := newHistory().setup(StockKey, 10, 0)
	buy(b, 1, "u1", "a", ms(10), ms(1000))
	buy(b, 2, "u1", "b", ms(20), ms(1000)) // a's lease still held: a double hold
	r := run(t, "orders", b.final(StockKey, 8, ms(2000)).final(OrderKeyPrefix+"u1", 2, ms(2000)).build())
	assert.Equal(t, Invalid, r.Verdict)
	assert.Equal(t, int64(1), r.Metrics["duplicate_orders"])
	assert.Equal(t, int64(0), r.Metrics["oversold_units"])
	require.Len(t, r.Anomalies, 1)
	assert.Equal(t, KindDuplicateOrder, r.Anomalies[0].Kind)
	assert.Equal(t, []string{"a", "b"}, r.Anomalies[0].Leases)
	assert.Contains(t, r.Anomalies[0].Text, "user u1 ordered 2 times, under leases a, b: two of them held the user's lock at once")
}

func TestOversoldIsFlagged(t *testing.T) {
	b := newHistory().setup(StockKey, 1, 0)
	buy(b, 1, "u1", "a", ms(10), ms(100))
	buy(b, 2, "u2", "b", ms(10), ms(100))
	r := run(t, "orders", b.final(StockKey, -1, ms(500)).final(OrderKeyPrefix+"u1", 1, ms(500)).final(OrderKeyPrefix+"u2", 1, ms(500)).build())
	assert.Equal(t, Invalid, r.Verdict)
	assert.Equal(t, int64(1), r.Metrics["oversold_units"])
}

func TestInconsistentOrIncompleteSaleIsUnknown(t *testing.T) {
	b := newHistory().setup(StockKey, 10, 0)
	buy(b, 1, "u1", "a", ms(10), ms(100))
	r := run(t, "orders", b.final(StockKey, 7, ms(500)).final(OrderKeyPrefix+"u1", 1, ms(500)).build())
	assert.Equal(t, Unknown, r.Verdict)
	assert.Contains(t, r.Reason, "inconsistent")

	b = newHistory().setup(StockKey, 10, 0)
	r = run(t, "orders", buy(b, 1, "u1", "a", ms(10), ms(100)).build())
	assert.Equal(t, Unknown, r.Verdict)

	// The stock adds up, but a buyer's order count was never read.
	b = newHistory().setup(StockKey, 10, 0)
	buy(b, 1, "u1", "a", ms(10), ms(100))
	r = run(t, "orders", b.final(StockKey, 9, ms(500)).build())
	assert.Equal(t, Unknown, r.Verdict)
	assert.Contains(t, r.Reason, `no final read of "lock:order:u1"`)
}

// Two orders by one user under leases that never overlapped: the first
// holder outlived its lease. Still a duplicate, and said so.
func TestDuplicateOrderAfterALeaseRanOut(t *testing.T) {
	b := newHistory().setup(StockKey, 10, 0)
	key := OrderKeyPrefix + "u1"
	b.acquire(1, key, "a", ms(0), ms(5), ms(100), 0).read(1, key, "a", 0, ms(6), ms(7))
	buy(b, 2, "u1", "b", ms(150), ms(100))
	b.order(history.OK, 1, key, "a", ms(300), ms(301))
	r := run(t, "orders", b.final(StockKey, 8, ms(500)).final(key, 2, ms(500)).build())
	assert.Equal(t, Invalid, r.Verdict)
	require.Len(t, r.Anomalies, 1)
	assert.ElementsMatch(t, []string{"a", "b"}, r.Anomalies[0].Leases)
	assert.Contains(t, r.Anomalies[0].Text, "their leases never overlapped")
}
