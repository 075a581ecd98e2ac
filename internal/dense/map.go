// Package dense is a map keyed by small non-negative integers, such as a
// history's process ids: a slice indexed by key where keys are small, a
// Go map beyond. Reading a long history looks up the open operation of a
// process for every line; a slice index costs a fraction of a hash map's
// probe and never rehashes as operations open and close.
package dense

import (
	"iter"
	"maps"
)

// indexLimit bounds the keys kept in the index, 4 bytes each, so that one
// large id does not make a large slice.
const indexLimit = 1 << 22

// Map maps int keys to values of V. The zero Map is empty and ready.
// Values live in a pool that reuses freed slots, so a long run of keys
// that come and go (processes, each with an operation open for a while)
// keeps only as many values as are present at once.
type Map[V any] struct {
	index []int32 // key -> its value's slot in pool, plus one; 0: none
	pool  []V
	free  []int32
	far   map[int]*V
	n     int
}

// Ptr points at the value of k, nil when k has none; it stays valid
// until the next Set or Delete.
func (m *Map[V]) Ptr(k int) *V {
	if k >= 0 && k < indexLimit {
		if k < len(m.index) && m.index[k] != 0 {
			return &m.pool[m.index[k]-1]
		}
		return nil
	}
	return m.far[k]
}

// Set gives k the value v.
func (m *Map[V]) Set(k int, v V) {
	if k < 0 || k >= indexLimit {
		m.setFar(k, v)
		return
	}
	if k >= len(m.index) {
		size := min(max(k+1, 2*len(m.index), 64), indexLimit)
		m.index = append(m.index, make([]int32, size-len(m.index))...)
	}
	if i := m.index[k]; i != 0 {
		m.pool[i-1] = v
		return
	}
	m.n++
	if n := len(m.free); n > 0 {
		i := m.free[n-1]
		m.free = m.free[:n-1]
		m.pool[i] = v
		m.index[k] = i + 1
		return
	}
	m.pool = append(m.pool, v)
	m.index[k] = int32(len(m.pool))
}

func (m *Map[V]) setFar(k int, v V) {
	if m.far == nil {
		m.far = map[int]*V{}
	}
	if p, ok := m.far[k]; ok {
		*p = v
		return
	}
	p := new(V) // not &v: v would escape on every call
	*p = v
	m.far[k] = p
	m.n++
}

// Delete removes k.
func (m *Map[V]) Delete(k int) {
	if k >= 0 && k < indexLimit {
		if k < len(m.index) && m.index[k] != 0 {
			i := m.index[k] - 1
			var zero V
			m.pool[i] = zero // let the collector have what it pointed to
			m.free = append(m.free, i)
			m.index[k] = 0
			m.n--
		}
		return
	}
	if _, ok := m.far[k]; ok {
		delete(m.far, k)
		m.n--
	}
}

// Len is how many keys have values.
func (m *Map[V]) Len() int { return m.n }

// All yields every key and value: the small keys in order, then the
// others in no order.
func (m *Map[V]) All() iter.Seq2[int, V] {
	return func(yield func(int, V) bool) {
		for k, i := range m.index {
			if i != 0 && !yield(k, m.pool[i-1]) {
				return
			}
		}
		for k, v := range maps.All(m.far) {
			if !yield(k, *v) {
				return
			}
		}
	}
}
