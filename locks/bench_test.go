package locks_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/locks"
	_ "github.com/deadbolt-lab/deadbolt/locks/all"
)

// Container sets the benchmarks run on. Every lock that runs on one master
// runs on the same one; the others run on their own set and carry its name
// as a label ("redlock@3masters"), so that no number hides its topology.
const (
	oneMaster    = "1master"
	threeMasters = "3masters"
	withReplica  = "replica"
)

var benchSpecs = map[string]cluster.Spec{
	oneMaster:    {Topology: cluster.Independent, Masters: 1},
	threeMasters: {Topology: cluster.Independent, Masters: 3},
	// simple-wait needs a replica to acknowledge its WAIT.
	withReplica: {Topology: cluster.Sentinel, Replicas: 1, Sentinels: 1, Quorum: 1},
}

// benchPlacement is where a lock is benchmarked when one master is not
// what it is for: quorum locks on three masters, WAIT with a replica.
var benchPlacement = map[string]string{
	"redlock":     threeMasters,
	"multilock":   threeMasters,
	"simple-wait": withReplica,
}

// benchFirst are the locks `deadbolt bench` checks targets on.
var benchFirst = []string{"simple", "reentrant", "bsm", "redsync"}

// benchExtra are further runs of a lock on another set, for comparison.
var benchExtra = []struct{ lock, set string }{
	{"redsync", threeMasters}, // redsync as Redlock, next to our redlock
}

// benchSets starts each container set at most once per benchmark run, the
// first time a selected sub-benchmark needs it, and removes them all when
// the parent benchmark ends.
type benchSets struct {
	parent testing.TB
	mu     sync.Mutex
	sets   map[string]*benchSet
}

type benchSet struct {
	once sync.Once
	c    *cluster.Cluster
	err  error
}

func (s *benchSets) get(name string) (*cluster.Cluster, error) {
	s.mu.Lock()
	set := s.sets[name]
	if set == nil {
		set = &benchSet{}
		s.sets[name] = set
	}
	s.mu.Unlock()
	set.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		set.c, set.err = cluster.Start(ctx, benchSpecs[name])
		if set.err == nil {
			c := set.c
			s.parent.Cleanup(func() {
				if err := c.Close(context.Background()); err != nil {
					s.parent.Errorf("remove cluster %s: %v", c.Run, err)
				}
			})
		}
	})
	return set.c, set.err
}

// BenchmarkAcquireRelease measures one acquire + release cycle on one key
// from a single goroutine, for every registered lock, against "ceiling":
// the same two round trips in plain go-redis with nothing around them.
func BenchmarkAcquireRelease(b *testing.B) {
	clustertest.RequireDocker(b)
	// go-redis logs each Sentinel lookup; on stdout it would split result
	// lines.
	redis.SetLogger(quietLog{})
	sets := &benchSets{parent: b, sets: map[string]*benchSet{}}
	b.Run("ceiling", func(b *testing.B) { benchCeiling(b, sets) })
	// The locks the targets compare come first, right after the ceiling,
	// so that they share the machine's load; then all the others.
	names := slices.Clone(benchFirst)
	for _, name := range locks.Names() {
		if !slices.Contains(benchFirst, name) {
			names = append(names, name)
		}
	}
	for _, name := range names {
		if locks.Lookup(name) != nil {
			continue // not registered in this build
		}
		set := benchPlacement[name]
		if set == "" {
			set = oneMaster
		}
		benchLock(b, sets, name, set)
	}
	for _, x := range benchExtra {
		if locks.Lookup(x.lock) == nil {
			benchLock(b, sets, x.lock, x.set)
		}
	}
}

func benchLabel(name, set string) string {
	if set == oneMaster {
		return name
	}
	return name + "@" + set
}

// benchLock benchmarks the lock on set; a lock placed on one master that
// refuses a single master group moves to three masters, labelled so.
func benchLock(b *testing.B, sets *benchSets, name, set string) {
	if set == oneMaster && locks.Fits(name, 1) != nil {
		set = threeMasters
	}
	b.Run(benchLabel(name, set), func(b *testing.B) {
		c, err := sets.get(set)
		if err != nil {
			b.Fatalf("start %s: %v", set, err)
		}
		l, err := locks.New(name, c.Endpoints(), locks.Options{TTL: 10 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		defer locks.Close(l)
		ctx := context.Background()
		key := "bench:" + benchLabel(name, set)
		cycle := func() {
			lease, err := l.Acquire(ctx, key)
			if err != nil {
				b.Fatalf("acquire: %v", err)
			}
			if err := l.Release(ctx, lease); err != nil {
				b.Fatalf("release: %v", err)
			}
		}
		ceiling := ceilingCycle(b, c)
		cycle() // dial and load scripts outside the measurement
		ceiling()
		clustertest.Interleaved(b, cycle, ceiling)
		// ns/op, B/op and allocs/op are the lock's alone.
		bytes, allocs := allocsOf(cycle)
		b.ReportMetric(bytes, "B/op")
		b.ReportMetric(allocs, "allocs/op")
	})
}

// allocsOf measures a cycle's heap bytes and allocations, outside the timed
// loop.
func allocsOf(cycle func()) (bytes, allocs float64) {
	const runs = 50
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < runs; i++ {
		cycle()
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / runs, float64(after.Mallocs-before.Mallocs) / runs
}

// benchCeiling is the floor of any lock cycle on its own: SET NX PX, then
// the release script by EVALSHA (loaded beforehand), no token generation,
// no timeouts, no fallbacks.
func benchCeiling(b *testing.B, sets *benchSets) {
	c, err := sets.get(oneMaster)
	if err != nil {
		b.Fatalf("start %s: %v", oneMaster, err)
	}
	cycle := ceilingCycle(b, c)
	cycle()
	for b.Loop() {
		cycle()
	}
}

// ceilingCycle prepares the ceiling's cycle on the first master of c.
func ceilingCycle(b *testing.B, c *cluster.Cluster) func() {
	rdb := c.ByRole(cluster.RoleRedis)[0].Client()
	b.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	src, err := os.ReadFile("scripts/release.lua")
	if err != nil {
		b.Fatal(err)
	}
	sha, err := rdb.ScriptLoad(ctx, string(src)).Result()
	if err != nil {
		b.Fatal(err)
	}
	const key, token = "bench:ceiling", "0123456789abcdef01234567"
	return func() {
		ok, err := rdb.SetNX(ctx, key, token, 10*time.Second).Result()
		if err == nil && !ok {
			err = errors.New("key held")
		}
		if err != nil {
			b.Fatalf("SET NX: %v", err)
		}
		n, err := rdb.EvalSha(ctx, sha, []string{key}, token).Int()
		if err == nil && n != 1 {
			err = errors.New("not ours")
		}
		if err != nil {
			b.Fatalf("release: %v", err)
		}
	}
}

type quietLog struct{}

func (quietLog) Printf(context.Context, string, ...any) {}
