package checker

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/deadbolt-lab/deadbolt/history"
)

// OrderKeyPrefix is the per-user lock of the orders workload.
const OrderKeyPrefix = "lock:order:"

// StockKey is where the orders workload keeps its stock.
const StockKey = "stock"

func init() {
	Register("orders", "a flash sale's damage: users who ordered more than once, and units sold beyond the stock",
		func(Options) Checker { return orders{} })
}

// orders judges the flash sale: one order per user, made under the user's
// lock, from a limited stock. The final state (the harness's reads after
// the run) is what the shop is left with.
type orders struct{}

// DuplicateOrder is one user who ordered more than once.
type DuplicateOrder struct {
	User   string   `json:"user"`
	Orders int64    `json:"orders"`
	Leases []string `json:"leases"`
	// Overlapping: two of those leases held the user's lock at once.
	Overlapping bool  `json:"overlapping"`
	At          int64 `json:"at"`
}

func (orders) Check(in *Input) Result {
	r := newResult("orders")
	var stock, left *int64
	final := map[string]int64{}
	bought := map[string][]history.Operation{}
	for _, p := range in.Pairs {
		inv := p.Invoke
		ok := p.Outcome() == history.OK
		switch {
		case inv.Process == history.HarnessProcess && ok && inv.F == history.Write && inv.Key == StockKey:
			stock = inv.Value
		case inv.Process == history.HarnessProcess && ok && inv.F == history.Read && inv.Key == StockKey:
			left = p.Complete.Value
		case inv.Process == history.HarnessProcess && ok && inv.F == history.Read && p.Complete.Value != nil &&
			strings.HasPrefix(inv.Key, OrderKeyPrefix):
			final[inv.Key] = *p.Complete.Value
		case inv.F == history.Order && p.Outcome() != history.Fail:
			bought[inv.Key] = append(bought[inv.Key], p)
		}
	}
	if stock == nil || left == nil {
		r.Verdict = Unknown
		r.Reason = "the sale's stock was not read before and after the run, so its damage cannot be counted."
		return r
	}
	var unread []string
	for key, ps := range bought {
		if _, ok := final[key]; !ok && slices.ContainsFunc(ps, func(p history.Operation) bool { return p.Outcome() == history.OK }) {
			unread = append(unread, key)
		}
	}
	var dups []DuplicateOrder
	var sold, duplicates int64
	for key, n := range final {
		sold += n
		if n <= 1 {
			continue
		}
		duplicates += n - 1
		d := DuplicateOrder{User: strings.TrimPrefix(key, OrderKeyPrefix), Orders: n}
		for _, p := range bought[key] {
			d.Leases = append(d.Leases, p.Invoke.Lease)
			if d.At == 0 || p.Invoke.Time < d.At {
				d.At = p.Invoke.Time
			}
		}
		for i, a := range d.Leases {
			for _, b := range d.Leases[i+1:] {
				d.Overlapping = d.Overlapping || overlap(in.LeaseHolds(a), in.LeaseHolds(b))
			}
		}
		dups = append(dups, d)
	}
	sort.Slice(dups, func(i, j int) bool { return dups[i].At < dups[j].At })
	if dups == nil {
		dups = []DuplicateOrder{}
	}
	r.Details = dups
	for _, d := range dups {
		how := "their leases never overlapped (a holder that outlived its lease)"
		if d.Overlapping {
			how = "two of them held the user's lock at once"
		}
		r.Anomalies = append(r.Anomalies, Anomaly{Kind: KindDuplicateOrder, At: d.At, Key: OrderKeyPrefix + d.User, Leases: d.Leases,
			Text: fmt.Sprintf("user %s ordered %d times, under leases %s: %s", d.User, d.Orders, strings.Join(d.Leases, ", "), how)})
	}
	oversold := max(sold-*stock, 0)
	if oversold > 0 {
		r.Anomalies = append(r.Anomalies, Anomaly{Kind: KindOversold, At: in.End,
			Text: fmt.Sprintf("%s sold from a stock of %d: %d oversold", Plural(sold, "unit"), *stock, oversold)})
	}
	r.Metrics["duplicate_orders"] = duplicates
	r.Metrics["oversold_units"] = oversold
	r.Metrics["units_sold"] = sold
	switch {
	case duplicates > 0 || oversold > 0:
		r.Verdict = Invalid
		r.Reason = fmt.Sprintf("the sale went wrong: %s by %s, and %s from a stock of %d.",
			Plural(duplicates, "duplicate order"), Plural(len(dups), "user"), PluralAs(oversold, "unit oversold", "units oversold"), *stock)
	case len(unread) > 0:
		sort.Strings(unread)
		r.Verdict = Unknown
		r.Reason = fmt.Sprintf("no final read of %s, who ordered, so the sale's damage cannot be counted.", quoteAll(unread))
	case *stock-*left != sold:
		r.Verdict = Unknown
		r.Reason = fmt.Sprintf("the stock went from %d to %d while users hold %s: the resource is inconsistent, so nothing can be concluded.", *stock, *left, Plural(sold, "unit"))
	default:
		r.Reason = fmt.Sprintf("every one of %s went to a different user, within the stock of %d.", Plural(int(sold), "unit"), *stock)
	}
	return r
}
