// Package suggest finds the known name a misspelt one was meant to be, for
// the "unknown X" messages: `unknown lock "simpel" (known: ...); did you
// mean "simple"?`.
package suggest

import (
	"fmt"
	"unicode/utf8"
)

// Distance is the Levenshtein distance between a and b, counted in runes:
// the fewest insertions, deletions and substitutions that turn a into b.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// prev[j] is the distance between the first i-1 runes of a and the
	// first j of b; cur is row i.
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			sub := prev[j-1]
			if ra[i-1] != rb[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Closest is the known name nearest name, when it is near enough to be
// what was meant: at most 2 edits away, or at most a third of name's
// length for a long name, and fewer edits than name has runes (a one-rune
// name is never a misspelling of anything). Of equally near names the
// first in known wins; name itself is never suggested.
func Closest(name string, known []string) (string, bool) {
	n := utf8.RuneCountInString(name)
	limit := min(max(2, n/3), n-1)
	best, bestD := "", limit+1
	for _, k := range known {
		if k == name {
			continue
		}
		if d := Distance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best, best != ""
}

// Hint is `; did you mean "NAME"?` for the known name closest to name, or
// "" when none is close: the tail of an "unknown X" message.
func Hint(name string, known []string) string {
	if k, ok := Closest(name, known); ok {
		return fmt.Sprintf("; did you mean %q?", k)
	}
	return ""
}
