package cli

import (
	"cmp"
	"slices"
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// pooled is what a schedule asks of the cluster pool (a nil *cluster.Pool
// answers no to both).
type pooled interface {
	Parked(cluster.Spec) bool
	Lent(cluster.Spec) bool
}

// schedule picks the run a free slot starts. The longest first, so that
// the last slot is not left running one long scenario alone; but among the
// runs at least half as long as the longest left, one whose cluster is
// parked goes first, and one whose cluster another run still holds waits
// for it. Starting new containers costs this machine more CPU than
// anything a run does (Docker's network setup, runc, the userland proxy),
// so a suite that starts two clusters of one spec side by side, when one
// could have waited a few seconds for the other, is slower for it.
type schedule struct {
	left   []int // runs not started, the longest first
	length []time.Duration
	spec   []cluster.Spec
	pool   pooled
}

// startCost is about what starting one container adds to a run's length
// on a loaded 2-core machine (a Sentinel cluster's six took 16-30 s in a
// suite four at a time).
const startCost = 3 * time.Second

// newSchedule orders the suite's runs by length, counting the start of
// new containers in the length of each run that will need them: with
// reuse, the first run of a spec (or any of a spec never kept); without,
// every run. A short run on a cluster of its own is not left for last.
// o.Pool is the pool (nil: every run starts fresh).
func newSchedule(suite []scenarios.Scenario, o scenarios.RunOptions) *schedule {
	s := &schedule{pool: o.Pool}
	reuse := o.Pool != nil
	seen := map[cluster.Spec]bool{}
	for i, sc := range suite {
		s.left = append(s.left, i)
		s.length = append(s.length, sc.Length())
		spec, err := sc.ClusterSpec(o)
		if err != nil {
			spec = cluster.Spec{} // the run fails on its own, with this error
		}
		s.spec = append(s.spec, spec.Defaults())
	}
	slices.SortStableFunc(s.left, func(a, b int) int { return cmp.Compare(s.length[b], s.length[a]) })
	for _, i := range s.left {
		if !reuse || !seen[s.spec[i]] || !s.spec[i].Poolable() {
			s.length[i] += time.Duration(s.spec[i].Containers()) * startCost
		}
		seen[s.spec[i]] = true
	}
	slices.SortStableFunc(s.left, func(a, b int) int { return cmp.Compare(s.length[b], s.length[a]) })
	return s
}

// next removes and returns the run to start now; call it only while runs
// are left.
func (s *schedule) next() int {
	band := 0 // the runs at least half as long as the longest left
	for band < len(s.left) && 2*s.length[s.left[band]] >= s.length[s.left[0]] {
		band++
	}
	pick := 0
	if k := slices.IndexFunc(s.left[:band], func(i int) bool { return s.pool.Parked(s.spec[i]) }); k >= 0 {
		pick = k
	} else if k := slices.IndexFunc(s.left[:band], func(i int) bool { return !s.pool.Lent(s.spec[i]) }); k >= 0 {
		pick = k
	}
	i := s.left[pick]
	s.left = slices.Delete(s.left, pick, pick+1)
	return i
}
