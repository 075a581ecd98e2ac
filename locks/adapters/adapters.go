// Package adapters drives third-party Redis lock libraries, unmodified and
// through their public APIs only, behind deadbolt's lock interface:
//
//   - redsync: github.com/go-redsync/redsync/v4 with its go-redis v9 pool,
//     one pool per master group (one pool on the sentinel topology, where it
//     is a single-instance lock; N pools on independent masters, where it is
//     Redlock).
//   - bsm: github.com/bsm/redislock over a single master group.
//   - rueidis: github.com/redis/rueidis/rueidislock over a single master
//     group, on a rueidis client of its own (rueidis's Sentinel client on
//     the sentinel topology): auto-extended leases, loss seen through
//     client-side caching (rueidis.go says what it is and how it maps).
//
// Each factory builds its library's client from the endpoints, as a user
// of that library would, without dialling (redsync and bsm on go-redis
// clients from locks.Options.Clients; rueidis dialling through
// endpoints.Dialer, at its first acquire). Each adapter maps the library's
// results onto a Lease and its "not obtained" / "not held" errors onto
// locks.ErrNotAcquired / ErrNotHeld; every other error is an unknown
// outcome. Options map onto the library's own settings (expiry, retries,
// drift, timeouts) where it has them.
package adapters

import (
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/locks/adapters/rueidisadapter"
)

func init() {
	locks.Register("rueidis", rueidisadapter.Summary, rueidisadapter.New)
	locks.RegisterKnobs("rueidis", rueidisadapter.Knobs())
}
