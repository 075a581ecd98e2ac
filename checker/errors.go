package checker

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// errorClass names what refused an operation, from its error: the first
// Redis error code in it (NOREPLICAS, CLUSTERDOWN, READONLY, NOPERM,
// LOADING: a word of four or more capitals, wherever the library put it),
// else the message itself (a socket's error without its addresses), cut
// short; "no error given" when it has none.
func errorClass(msg string) string {
	for _, w := range strings.Fields(msg) {
		if len(w) >= 4 && strings.Trim(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" {
			return w
		}
	}
	if msg == "" {
		return "no error given"
	}
	// A socket's error names its two addresses, which differ on every
	// connection ("read tcp 127.0.0.1:1->127.0.0.1:2: i/o timeout"): the
	// class is what happened to it.
	if i := strings.LastIndex(msg, ": "); i >= 0 && (strings.Contains(msg, "tcp ") || strings.Contains(msg, "tcp6 ")) {
		msg = msg[i+2:]
	}
	if len(msg) > 48 {
		return msg[:48] + "..."
	}
	return msg
}

func (s *Stats) countAcquireError(msg string) {
	if s.AcquireErrors == nil {
		s.AcquireErrors = map[string]int{}
	}
	class := errorClass(msg)
	if _, ok := s.AcquireErrors[class]; !ok {
		class = strings.Clone(class) // msg may share a chunk of the reading's (strarena)
	}
	s.AcquireErrors[class]++
}

// acquireErrorsText lists the commonest errors of s.AcquireErrors, most
// first: "NOREPLICAS 3853, CLUSTERDOWN 545, lock not acquired 420".
func (s Stats) acquireErrorsText(most int) string {
	classes := slices.SortedFunc(maps.Keys(s.AcquireErrors), func(a, b string) int {
		if d := s.AcquireErrors[b] - s.AcquireErrors[a]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for i, c := range classes {
		if i == most {
			parts = append(parts, fmt.Sprintf("%d more", len(classes)-most))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", c, s.AcquireErrors[c]))
	}
	return strings.Join(parts, ", ")
}
