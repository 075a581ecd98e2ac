package checker

import (
	"math"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
)

// never stands for a time that is not reached: an expiry of a lease without
// a TTL, or the return of an operation whose outcome is unknown.
const never = math.MaxInt64

// at formats a history time (nanoseconds since the run started) for humans.
func at(t int64) string {
	if t == never {
		return "∞"
	}
	d := time.Duration(t)
	switch {
	case d >= time.Second || d <= -time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond || d <= -time.Millisecond:
		return d.Round(time.Microsecond).String()
	}
	return d.String() // a 1ns overlap is one, not "0s"
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
