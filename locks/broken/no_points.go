package broken

import (
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// get-then-del and setnx-expire as a lock of one's own would be: no named
// points, so nothing inside them stops on request, and only a fault timed
// from outside (pause-in-release, crash-in-acquire) can land in their
// windows.
func init() {
	locks.Register("get-then-del-no-points", "BROKEN: get-then-del (GET, compare in the client, DEL) declaring no named points", withoutPoints(NewGetThenDel))
	locks.Register("setnx-expire-no-points", "BROKEN: setnx-expire (SETNX, then PEXPIRE) declaring no named points", withoutPoints(NewSetnxExpire))
}

// withoutPoints builds f's lock deaf to Options.At.
func withoutPoints(f locks.Factory) locks.Factory {
	return func(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
		o.At = nil
		return f(e, o)
	}
}
