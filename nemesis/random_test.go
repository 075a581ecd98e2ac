package nemesis

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The seed fixes the sequence of faults, targets, lengths and sizes.
func TestRandomDrawsTheSameStepsFromTheSameSeed(t *testing.T) {
	n := &Random{P: Params{Faults: []string{"kill", "clock-jump", "link-delay", "pause-client"}}}
	ttl := time.Second
	draw := func(seed uint64) []Step {
		env := Env{Rng: rand.New(rand.NewPCG(seed, 0)), TTL: ttl}
		var steps []Step
		for range 40 {
			steps = append(steps, n.step(env))
		}
		return steps
	}
	a, b, c := draw(1), draw(1), draw(2)
	require.Equal(t, a, b)
	require.NotEqual(t, a, c)
	seen := map[string]bool{}
	for _, s := range a {
		seen[s.Fault] = true
		require.NoError(t, s.validate())
		require.GreaterOrEqual(t, s.For, ttl, "about twice the TTL, scaled by [0.5, 1.5)")
		require.LessOrEqual(t, s.For, 3*ttl)
		switch s.Fault {
		case "clock-jump":
			require.GreaterOrEqual(t, s.By.Abs(), ttl)
			require.LessOrEqual(t, s.By.Abs(), 3*ttl)
		case "link-delay":
			require.Equal(t, "link:*:minority", s.Target)
			require.GreaterOrEqual(t, s.By, ttl)
		case "pause-client":
			require.Equal(t, "client:*", s.Target, "a random pause needs no key")
		case "kill":
			require.Equal(t, "minority", s.Target)
		}
	}
	require.Len(t, seen, 4, "40 draws reach every fault")
}

func TestNeedsOfReadsTopologyClockAndLinks(t *testing.T) {
	need, err := NeedsOf("random", Params{Faults: []string{"clock-jump", "link-cut"}})
	require.NoError(t, err)
	require.Equal(t, Needs{ClockFaults: true, LinkFaults: true}, need)

	need, err = NeedsOf("plan", Params{Steps: []Step{{Fault: "pause-node", Target: "primary"}}})
	require.NoError(t, err)
	require.Equal(t, "sentinel|cluster", need.Topology, "only Sentinel and a Redis Cluster know a primary")
	require.False(t, need.Allows("independent"))

	need, err = NeedsOf("kill-minority", Params{})
	require.NoError(t, err)
	require.Equal(t, "independent", need.Topology)

	_, err = NeedsOf("random", Params{Faults: []string{"meteor"}})
	require.ErrorContains(t, err, `unknown fault "meteor"`)
	_, err = New("random", Params{})
	require.ErrorContains(t, err, "at least one fault")
}
