// Package adapters registers the third-party Redis lock libraries that
// deadbolt's own client runs at deadbolt's own versions (go.mod's), each
// unmodified, through its public API, as its users run it (the client its
// README builds, the library's and the client's defaults; knobs change
// them):
//
//   - redsync: github.com/go-redsync/redsync/v4 over go-redis v9, one pool
//     per master group (one pool on the sentinel topology, where it is a
//     single-instance lock; N pools on independent masters: Redlock).
//   - bsm: github.com/bsm/redislock over a single master group.
//   - rueidis: github.com/redis/rueidis/rueidislock over a single master
//     group, on a rueidis client of its own: auto-extended leases, loss
//     seen through client-side caching.
//
// Each adapter is a package of its own (bsmadapter, redsyncadapter,
// rueidisadapter), which the driver of that library at any version
// (drivers/go/) compiles against the version asked for. Each maps the
// library's results onto a Lease and its "not obtained" / "not held"
// answers onto locks.ErrNotAcquired / ErrNotHeld; every other error is an
// unknown outcome.
package adapters

import (
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/locks/adapters/bsmadapter"
	"github.com/deadbolt-lab/deadbolt/locks/adapters/redsyncadapter"
	"github.com/deadbolt-lab/deadbolt/locks/adapters/rueidisadapter"
)

// The libraries at deadbolt's own versions (go.mod's), each the very
// adapter its driver at any version is built from.
func init() {
	locks.Register("redsync", redsyncadapter.Summary, redsyncadapter.New)
	locks.RegisterKnobs("redsync", redsyncadapter.Knobs())
	locks.InDebate("redsync", 8)
	locks.Register("bsm", bsmadapter.Summary, bsmadapter.New)
	locks.RegisterKnobs("bsm", bsmadapter.Knobs())
	locks.InDebate("bsm", 9)
	locks.Register("rueidis", rueidisadapter.Summary, rueidisadapter.New)
	locks.RegisterKnobs("rueidis", rueidisadapter.Knobs())
}
