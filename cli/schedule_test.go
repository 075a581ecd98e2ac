package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// fakePool says which specs (by master count) are parked and lent.
type fakePool struct{ parked, lent map[int]bool }

func (f fakePool) Parked(s cluster.Spec) bool { return f.parked[s.Masters] }
func (f fakePool) Lent(s cluster.Spec) bool   { return f.lent[s.Masters] }

// testSchedule is runs of the given lengths (seconds), run i on spec i's
// master count, longest first.
func testSchedule(pool pooled, lengths, specs []int) *schedule {
	s := &schedule{pool: pool}
	for i := range lengths {
		s.left = append(s.left, i)
		s.length = append(s.length, time.Duration(lengths[i])*time.Second)
		s.spec = append(s.spec, cluster.Spec{Masters: specs[i]})
	}
	return s
}

func drain(s *schedule) []int {
	var out []int
	for len(s.left) > 0 {
		out = append(out, s.next())
	}
	return out
}

func TestScheduleWithoutAPoolIsLongestFirst(t *testing.T) {
	suite := []scenarios.Scenario{}
	for _, name := range []string{"pause-simple", "wait-not-enough", "failover-simple", "crash-simple"} {
		sc, err := scenarios.Get(name)
		require.NoError(t, err)
		suite = append(suite, sc)
	}
	s := newSchedule(suite, scenarios.RunOptions{Seed: 1})
	var names []string
	for _, i := range drain(s) {
		names = append(names, suite[i].Name)
	}
	// Equal lengths keep the suite's order.
	require.Equal(t, []string{"wait-not-enough", "failover-simple", "pause-simple", "crash-simple"}, names)
}

func TestScheduleTakesAParkedClusterFirst(t *testing.T) {
	// Run 1's cluster is parked and run 1 is at least half as long as run
	// 0: it goes first. Run 3's is parked too, but it is short: it waits
	// its turn.
	pool := fakePool{parked: map[int]bool{2: true, 4: true}}
	s := testSchedule(pool, []int{60, 40, 35, 10}, []int{1, 2, 3, 4})
	require.Equal(t, 1, s.next())
	require.Equal(t, 0, s.next())
}

func TestScheduleWaitsForALentCluster(t *testing.T) {
	// Run 0's spec is lent to a running run: the next run of another spec
	// goes first, so that run 0 may get that cluster back.
	pool := fakePool{lent: map[int]bool{1: true}}
	s := testSchedule(pool, []int{60, 50, 40}, []int{1, 1, 2})
	require.Equal(t, []int{2, 0, 1}, drain(s))

	// When every run of the band would wait, the longest starts anyway.
	pool = fakePool{lent: map[int]bool{1: true, 2: true}}
	s = testSchedule(pool, []int{60, 50, 10}, []int{1, 2, 3})
	require.Equal(t, 0, s.next())
}

func TestScheduleCountsTheStartOfNewContainers(t *testing.T) {
	// pause-redlock is the shortest run, but the only one on five masters
	// and a resource: their start makes it the longest. expiry-simple
	// starts the one-master cluster crash-no-ttl then reuses.
	var suite []scenarios.Scenario
	for _, name := range []string{"crash-no-ttl", "expiry-simple", "pause-redlock"} {
		sc, err := scenarios.Get(name)
		require.NoError(t, err)
		suite = append(suite, sc)
	}
	// A pool that has parked nothing yet: the costs alone decide.
	s := newSchedule(suite, scenarios.RunOptions{Seed: 1, Pool: cluster.NewPool(nil)})
	require.Equal(t, []int{2, 1, 0}, drain(s))
}
