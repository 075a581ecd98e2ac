package locks

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// A lease's object is found until its release forgets it; a lease never
// put, or already released, is not held, and says which library.
func TestHeldFindsALeasesObjectUntilItsRelease(t *testing.T) {
	var h Held[string]
	a, b := &Lease{Key: "k0"}, &Lease{Key: "k0"}
	h.Put(a, "mutex of a")
	v, err := h.Get(a, false, "redsync")
	require.NoError(t, err)
	require.Equal(t, "mutex of a", v)
	_, err = h.Get(b, false, "redsync")
	require.True(t, errors.Is(err, ErrNotHeld), "another lease on the same key is not a's")
	require.ErrorContains(t, err, `redsync: no lock of this client for "k0"`)
	v, err = h.Get(a, true, "redsync")
	require.NoError(t, err)
	require.Equal(t, "mutex of a", v)
	_, err = h.Get(a, true, "redsync")
	require.True(t, errors.Is(err, ErrNotHeld), "released once")

	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := &Lease{Key: "k"}
			h.Put(l, "x")
			_, err := h.Get(l, true, "bsm")
			require.NoError(t, err)
		}()
	}
	wg.Wait()
}
