// Package adapters drives third-party Redis lock libraries, unmodified and
// through their public APIs only, behind deadbolt's lock interface:
//
//   - redsync: github.com/go-redsync/redsync/v4 with its go-redis v9 pool,
//     one pool per master group (one pool on the sentinel topology, where it
//     is a single-instance lock; N pools on independent masters, where it is
//     Redlock).
//   - bsm: github.com/bsm/redislock over a single master group.
//
// Each adapter maps the library's results onto a Lease and its "not
// obtained" / "not held" errors onto locks.ErrNotAcquired / ErrNotHeld;
// every other error is an unknown outcome. Options map onto the library's
// own settings (expiry, retries, drift) where it has them.
package adapters
