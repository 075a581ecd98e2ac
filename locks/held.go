package locks

import (
	"fmt"
	"sync"
)

// Held is an adapter's table of its library's lock objects by lease: the
// object a grant returned is the one its extend and release must call.
// Safe for concurrent use; the zero value is ready.
type Held[T any] struct {
	mu sync.Mutex
	m  map[*Lease]T
}

// Put keeps v as lease l's object.
func (h *Held[T]) Put(l *Lease, v T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[*Lease]T{}
	}
	h.m[l] = v
}

// Get is lease l's object, dropped from the table when forget (a
// release). A lease this client was never granted, or has released, is
// ErrNotHeld, with lib (the library's name) in the message.
func (h *Held[T]) Get(l *Lease, forget bool, lib string) (T, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[l]
	if !ok {
		return v, fmt.Errorf("%w: %s: no lock of this client for %q", ErrNotHeld, lib, l.Key)
	}
	if forget {
		delete(h.m, l)
	}
	return v, nil
}
