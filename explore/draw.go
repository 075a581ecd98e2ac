package explore

import (
	"hash/fnv"
	"math/rand"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
)

// drawer makes every choice of one generated run from gopter's generators,
// seeded from the exploration's seed and the run's index alone: the same
// seed gives the same scenarios, on any machine, in any order.
type drawer struct{ p *gopter.GenParameters }

func newDrawer(seed uint64, index int, salt string) drawer {
	h := fnv.New64a()
	var b [16]byte
	for i := range 8 {
		b[i] = byte(seed >> (8 * i))
		b[8+i] = byte(uint64(index) >> (8 * i))
	}
	h.Write(b[:])
	h.Write([]byte(salt))
	p := gopter.DefaultGenParameters()
	p.Rng = rand.New(rand.NewSource(int64(h.Sum64() >> 1)))
	return drawer{p}
}

// weighted is a choice and its weight among its alternatives.
type weighted[T any] struct {
	weight int
	value  T
}

// pick draws one of the choices, each as often as its weight says.
func pick[T any](d drawer, choices ...weighted[T]) T {
	gens := make([]gen.WeightedGen, 0, len(choices))
	for _, c := range choices {
		gens = append(gens, gen.WeightedGen{Weight: c.weight, Gen: gen.Const(c.value)})
	}
	v, _ := gen.Weighted(gens)(d.p).Retrieve()
	return v.(T)
}

// one draws one of the values, each as likely.
func one[T any](d drawer, values ...T) T {
	choices := make([]weighted[T], len(values))
	for i, v := range values {
		choices[i] = weighted[T]{1, v}
	}
	return pick(d, choices...)
}

// intIn draws an integer from lo to hi, both included.
func (d drawer) intIn(lo, hi int) int {
	v, _ := gen.IntRange(lo, hi)(d.p).Retrieve()
	return v.(int)
}

// chance is true with probability p.
func (d drawer) chance(p float64) bool {
	v, _ := gen.Float64Range(0, 1)(d.p).Retrieve()
	return v.(float64) < p
}

// scaled is d times f, to the millisecond.
func scaled(d time.Duration, f float64) time.Duration {
	return time.Duration(float64(d) * f).Round(time.Millisecond)
}

// seedOf is the run seed of generated run index: its own, drawn from the
// exploration's seed, so that two runs of one exploration differ in the
// workload's draws as well as in their faults.
func seedOf(seed uint64, index int) uint64 {
	return uint64(newDrawer(seed, index, "run seed").intIn(1, 999_999))
}
