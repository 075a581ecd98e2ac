package dense

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Map behaves as a Go map would, for small, large and negative keys.
func TestMapAgreesWithAGoMap(t *testing.T) {
	var m Map[int]
	want := map[int]int{}
	r := rand.New(rand.NewPCG(1, 2))
	keys := []int{-2, -1, 0, 1, 63, 64, 1000, indexLimit - 1, indexLimit, 1 << 30}
	for i := range 20000 {
		k := keys[r.IntN(len(keys))]
		if r.IntN(3) == 0 {
			k = r.IntN(5000)
		}
		switch r.IntN(3) {
		case 0:
			m.Set(k, i)
			want[k] = i
		case 1:
			m.Delete(k)
			delete(want, k)
		case 2:
			if p := m.Ptr(k); p != nil {
				*p++
				want[k]++
			}
		}
		p := m.Ptr(k)
		w, wok := want[k]
		require.Equal(t, wok, p != nil, "key %d", k)
		if p != nil {
			require.Equal(t, w, *p, "key %d", k)
		}
		require.Equal(t, len(want), m.Len())
	}
	got := map[int]int{}
	for k, v := range m.All() {
		got[k] = v
	}
	require.Equal(t, want, got)
}
