package strarena

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// Strings stay equal to what they were made from after the source changes
// and after many more strings are made, across chunks.
func TestStringsStayWhatTheyWere(t *testing.T) {
	var a Arena
	var got []string
	var want []string
	src := make([]byte, 0, 64)
	for i := range 20000 {
		src = fmt.Appendf(src[:0], "p%d.%d", i%97, i)
		if i%1000 == 0 {
			src = append(src, bytes.Repeat([]byte("x"), chunkSize/2)...) // longer than a chunk's share
		}
		got = append(got, a.String(src))
		want = append(want, string(src))
		clear(src)
	}
	require.Equal(t, want, got)
	require.Equal(t, "", a.String(nil))
}

func BenchmarkString(b *testing.B) {
	var a Arena
	src := []byte("p9476.25")
	for range b.N {
		_ = a.String(src)
	}
}
