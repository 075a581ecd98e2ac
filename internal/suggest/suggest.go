// Package suggest finds the known name a misspelt one was meant to be, for
// the "unknown X" messages: `unknown lock "simpel" (known: ...); did you
// mean "simple"?`.
package suggest

import (
	"fmt"
	"unicode/utf8"

	"github.com/agnivade/levenshtein"
)

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
		if d := levenshtein.ComputeDistance(name, k); d < bestD { // in runes
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
