package checker

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/deadbolt-lab/deadbolt/history"
)

// A seeded simulation of lock clients against a single lease-lock server,
// ticking in milliseconds. Each operation takes effect on the server at a
// random moment between its invocation and return (or, for info, possibly
// much later, or never). Leases expire on the server at grant + TTL; clients
// trust a lease until invoke + TTL - 1ms. As in real runs, the harness names
// each lease ("p3.2") apart from the server's random token, and renewals run
// on a watchdog process of their own, stamped by the client and recorded a
// few milliseconds late, out of index order. A correct server must never be
// flagged; a server that sometimes grants a held key must be.

type simLease struct {
	owner  string
	expiry int64
}

type simOp struct {
	inv      history.Op
	applyAt  int64 // when the server applies it; -1: never
	returnAt int64
	info     bool
	result   history.Type
	deadline int64
}

type simClient struct {
	process   int
	grants    int // acquires by this process, for lease ids
	op        *simOp
	key       string
	lease     string // the harness's lease id, "" when none held
	owner     string // the server's token for it
	watchdog  int    // the lease's watchdog process
	deadline  int64
	releaseAt int64
}

func simulate(seed int64, steal bool) (ops []history.Op, steals int) {
	rng := rand.New(rand.NewSource(seed))
	const ttl = 50
	server := map[string]simLease{}
	rec := newHistory()
	var clients []*simClient
	for i := 0; i < 6; i++ {
		clients = append(clients, &simClient{process: i})
	}
	nextProcess, nextWatchdog := len(clients), 1000
	var late []*simOp // info ops the server applies later
	apply := func(o *simOp, now int64) history.Type {
		k, cur := o.inv.Key, server[o.inv.Key]
		held := cur.owner != "" && cur.expiry > now
		switch o.inv.F {
		case history.Acquire:
			if held && !(steal && rng.Intn(4) == 0) {
				return history.Fail
			}
			if held {
				steals++
			}
			server[k] = simLease{o.inv.Owner, now + ms(ttl)}
		case history.Release:
			if !held || cur.owner != o.inv.Owner {
				return history.Fail
			}
			delete(server, k)
		case history.Renew:
			if !held || cur.owner != o.inv.Owner {
				return history.Fail
			}
			server[k] = simLease{cur.owner, now + ms(ttl)}
		}
		return history.OK
	}
	for tick := int64(0); tick < 3000; tick++ {
		now := ms(tick)
		kept := late[:0]
		for _, o := range late {
			if o.applyAt == now {
				apply(o, now)
			} else {
				kept = append(kept, o)
			}
		}
		late = kept
		for _, c := range clients {
			if o := c.op; o != nil {
				if o.applyAt == now {
					o.result = apply(o, now)
				}
				if o.returnAt != now {
					continue
				}
				c.op = nil
				if o.info {
					if o.applyAt > now {
						late = append(late, o)
					}
					rec.call(o.inv, history.Info, now, nil)
					reportLate(rec, rng, o, now)
					// An unknown outcome: carry on as a new client.
					c.process, c.grants, c.lease, c.owner = nextProcess, 0, "", ""
					nextProcess++
					continue
				}
				rec.call(o.inv, o.result, now, func(done *history.Op) {
					if o.result == history.OK && o.inv.F != history.Release {
						done.Deadline = o.deadline
					}
				})
				reportLate(rec, rng, o, now)
				switch {
				case o.result == history.OK && o.inv.F == history.Acquire:
					c.lease, c.owner, c.deadline = o.inv.Lease, o.inv.Owner, o.deadline
					c.watchdog = nextWatchdog
					nextWatchdog++
					c.releaseAt = now + ms(int64(rng.Intn(ttl+20)))
				case o.result == history.OK && o.inv.F == history.Renew:
					c.deadline = o.deadline
				case o.inv.F == history.Release:
					c.lease, c.owner = "", ""
				}
				continue
			}
			if rng.Intn(3) != 0 {
				continue
			}
			inv := history.Op{Time: now, Process: c.process, Key: fmt.Sprintf("k%d", rng.Intn(2)), TTL: ms(ttl)}
			switch {
			case c.lease == "":
				c.grants++
				inv.F, inv.Lease, inv.Owner = history.Acquire, fmt.Sprintf("p%d.%d", c.process, c.grants), fmt.Sprintf("%016x", rng.Uint64())
			case now >= c.releaseAt:
				// Sometimes after the lease lapsed: "not ours".
				inv.F, inv.Key, inv.Lease, inv.Owner = history.Release, c.key, c.lease, c.owner
			case now < c.deadline && rng.Intn(10) == 0:
				inv.F, inv.Key, inv.Lease, inv.Owner = history.Renew, c.key, c.lease, c.owner
				inv.Process, inv.Stamp = c.watchdog, history.StampClient
			default:
				continue // keep working under the lease
			}
			if inv.F == history.Acquire {
				c.key = inv.Key
			}
			o := &simOp{inv: inv, deadline: now + ms(ttl) - ms(1)}
			o.applyAt = now + ms(int64(1+rng.Intn(3)))
			o.returnAt = o.applyAt + ms(int64(rng.Intn(3)))
			if rng.Intn(15) == 0 {
				o.info = true
				switch rng.Intn(3) {
				case 0:
					o.applyAt = -1 // lost
				case 1:
					o.applyAt = o.returnAt + ms(int64(1+rng.Intn(100))) // delayed
				}
			}
			c.op = o
		}
	}
	return rec.build(), steals
}

// reportLate records a client-stamped renewal when its report arrives, up
// to 5ms after it completed.
func reportLate(rec *builder, rng *rand.Rand, o *simOp, now int64) {
	if o.inv.Stamp == history.StampClient {
		rec.reportedAt(now + ms(int64(rng.Intn(6))))
	}
}

func TestSimulatedCorrectServerIsNeverFlagged(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		ops, _ := simulate(seed, false)
		r := Check(ops, Options{})
		assert.Equal(t, Valid, r.Verdict, "seed %d: %s %v", seed, r.Reason, r.Anomalies)
		assert.Greater(t, r.Stats.AcquiresInfo, 0, "seed %d exercises info acquires", seed)
		assert.Greater(t, r.Stats.RenewalsOK, 0, "seed %d exercises renewals", seed)
		assert.Greater(t, r.Stats.ReleasesFail, 0, "seed %d exercises late releases", seed)
		assert.Greater(t, outOfOrder(ops), 0, "seed %d records renewals late", seed)
	}
}

// outOfOrder counts ops recorded after a later one.
func outOfOrder(ops []history.Op) int {
	n := 0
	for i := 1; i < len(ops); i++ {
		if ops[i].Time < ops[i-1].Time {
			n++
		}
	}
	return n
}

func TestSimulatedStealingServerIsFlagged(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		ops, steals := simulate(seed, true)
		r := Check(ops, Options{})
		assert.Greater(t, steals, 0)
		assert.Equal(t, Invalid, r.Verdict, "seed %d", seed)
		ll, _ := r.Check("lease-lock")
		assert.Equal(t, Invalid, ll.Verdict, "seed %d", seed)
	}
}
