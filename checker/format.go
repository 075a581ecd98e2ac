package checker

import (
	"math"

	"github.com/deadbolt-lab/deadbolt/history"
	"time"
)

// never stands for a time that is not reached: an expiry of a lease without
// a TTL, or the return of an operation whose outcome is unknown.
const never = math.MaxInt64

// at formats a history time (nanoseconds since the run started) for humans.
func at(t int64) string {
	if t == never {
		return "∞"
	}
	return time.Duration(t).String()
}

// historyEnd is the time of the last operation, where open windows and
// unfinished leases are cut off.
func historyEnd(ops []history.Op) int64 {
	var end int64
	for _, op := range ops {
		end = max(end, op.Time)
	}
	return end
}
