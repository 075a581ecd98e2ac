package checker

import "sync"

// Scratch maps and slices that one check of a window (or of a key) fills
// and drops. A long history's key is checked a window of about a thousand
// operations at a time, each in about a millisecond, and each check's
// maps are sized for its leases: made anew each time they were most of
// what a keyed check allocated (3.4 of 3.8 GB for a 10M-line history),
// and the collector ran every 20 ms. A pool hands back cleared ones.
// Only what nothing keeps after the check is put back.

// maxScratch bounds what a pool keeps: a map's cost to clear is its
// capacity, so one sized for a key checked whole is dropped, not reused.
const maxScratch = 1 << 13

// scratchMap pools maps of one type.
type scratchMap[K comparable, V any] struct{ p sync.Pool }

// get is an empty map with room for about n entries.
func (s *scratchMap[K, V]) get(n int) map[K]V {
	if n <= maxScratch {
		if m, ok := s.p.Get().(map[K]V); ok {
			return m
		}
	}
	return make(map[K]V, n)
}

// put clears m for reuse; nothing may read it after.
func (s *scratchMap[K, V]) put(m map[K]V) {
	if m == nil || len(m) > maxScratch {
		return
	}
	clear(m)
	s.p.Put(m)
}

// scratchSlice pools slices of one type.
type scratchSlice[T any] struct{ p sync.Pool }

// get is an empty slice with room for n.
func (s *scratchSlice[T]) get(n int) []T {
	if n <= maxScratch {
		if p, ok := s.p.Get().(*[]T); ok && cap(*p) >= n {
			return (*p)[:0]
		}
	}
	return make([]T, 0, n)
}

// put keeps v's array for reuse; nothing may read it after.
func (s *scratchSlice[T]) put(v []T) {
	if cap(v) == 0 || cap(v) > 4*maxScratch {
		return
	}
	clear(v[:cap(v)]) // drops what it points to
	s.p.Put(&v)
}
