// Package strarena makes many small strings out of few allocations.
// Reading a long history makes a lease name, an owner token and more for
// nearly every line; one allocation each was a large share of the reading
// and of the collector's work. An Arena copies them into chunks instead.
package strarena

import "unsafe"

// chunkSize is the size of each chunk: small enough that a few strings
// kept long (an operation left open) pin little, large enough that
// chunks are rare.
const chunkSize = 16 << 10

// Arena hands out strings copied into shared chunks. A chunk is never
// written again once a string points into it, so each string is as
// immutable as any other; the collector frees a chunk when no string
// points into it, so a string kept long pins its whole chunk: whoever
// keeps one for good should keep strings.Clone of it. The zero Arena is
// ready. Not safe for concurrent use.
type Arena struct {
	chunk []byte
}

// String returns a string equal to b, not sharing b's memory.
func (a *Arena) String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > chunkSize/4 {
		return string(b)
	}
	if cap(a.chunk)-len(a.chunk) < len(b) {
		a.chunk = make([]byte, 0, chunkSize)
	}
	start := len(a.chunk)
	a.chunk = append(a.chunk, b...)
	return unsafe.String(&a.chunk[start], len(b))
}
