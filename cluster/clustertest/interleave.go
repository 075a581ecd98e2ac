package clustertest

import (
	"testing"
	"time"
)

// Interleaved runs a benchmark loop that times one x and one ceiling per
// iteration, alternating which goes first, so that their ratio compares
// them under the same moment's load: on a shared 2-core machine the noise
// between runs is larger than the differences measured. It reports x's
// ns/op and the x-ceiling ratio (ceiling's time over x's).
func Interleaved(b *testing.B, x, ceiling func()) {
	var xNs, cNs time.Duration
	n := 0
	for b.Loop() {
		first, second, a, c := x, ceiling, &xNs, &cNs
		if n%2 == 1 {
			first, second, a, c = ceiling, x, &cNs, &xNs
		}
		t0 := time.Now()
		first()
		t1 := time.Now()
		second()
		*a += t1.Sub(t0)
		*c += time.Since(t1)
		n++
	}
	b.ReportMetric(float64(xNs.Nanoseconds())/float64(n), "ns/op")
	b.ReportMetric(float64(cNs)/float64(xNs), "x-ceiling")
}
