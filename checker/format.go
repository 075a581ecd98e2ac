package checker

import (
	"fmt"
	"math"
	"strings"
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

// Count is an integer a sentence counts.
type Count interface {
	~int | ~int64 | ~uint64
}

// Plural is n and the noun, the noun in the plural unless n is 1: "1
// seed", "2 seeds", "2 key stretches", "3 false yeses", "4 anomalies". The
// last word takes the plural, as English makes it of a regular noun. It is
// the one helper deadbolt's words count with (reports, the command line).
func Plural[N Count](n N, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %s", n, pluralOf(noun))
}

// PluralAs is n and one or many as n is 1 or not, for a phrase whose plural
// is not its last word's: PluralAs(n, "unit oversold", "units oversold").
func PluralAs[N Count](n N, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// pluralOf is a regular noun's plural: stretches, yeses, boxes; anomalies
// (but keys); seeds.
func pluralOf(noun string) string {
	for _, end := range []string{"s", "sh", "ch", "x", "z"} {
		if strings.HasSuffix(noun, end) {
			return noun + "es"
		}
	}
	if n := len(noun); n >= 2 && noun[n-1] == 'y' && !strings.ContainsRune("aeiou", rune(noun[n-2])) {
		return noun[:n-1] + "ies"
	}
	return noun + "s"
}
