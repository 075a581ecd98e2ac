// Package clustertest starts real clusters for tests. A test that needs
// Docker skips with the reason when no engine or image is there, except
// under CI=true, where the missing engine is a failure.
package clustertest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// Start starts spec and removes it when the test ends.
func Start(t testing.TB, spec cluster.Spec) *cluster.Cluster {
	t.Helper()
	RequireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, spec)
	if err != nil {
		t.Fatalf("start %s cluster: %v", spec.Topology, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			logTails(t, c)
		}
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("remove cluster %s: %v", c.Run, err)
		}
	})
	return c
}

// RequireDocker skips the test (fails it under CI=true) without an engine.
func RequireDocker(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := cluster.Available(ctx)
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but Docker is needed: %v", err)
	}
	t.Skipf("skipping: needs a Docker engine: %v", err)
}

// NewLock builds the named lock over c's endpoints, with connections of its
// own, closed when the test ends: one lock user, as a separate process
// would be.
func NewLock(t testing.TB, name string, c *cluster.Cluster, o locks.Options) locks.Lock {
	t.Helper()
	l, err := locks.New(name, c.Endpoints(), o)
	if err != nil {
		t.Fatalf("lock %s: %v", name, err)
	}
	t.Cleanup(func() { locks.Close(l) })
	return l
}

// Contend runs 6 workers, each with its own lock instance, that take the
// lock on one key rounds times each, hold it a millisecond and release it.
// It fails the test if two workers were ever inside at once, and returns
// the grants' sequence numbers and how many acquires succeeded.
func Contend(t *testing.T, c *cluster.Cluster, name string, o locks.Options, rounds int) (seqs []int64, acquired int64) {
	t.Helper()
	ctx := context.Background()
	var inside, maxInside, got atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		l := NewLock(t, name, c, o)
		wg.Go(func() {
			for i := 0; i < rounds; i++ {
				lease, err := l.Acquire(ctx, "contended")
				if err != nil {
					if !locks.Failed(err) {
						t.Errorf("acquire with an unknown outcome on a healthy node: %v", err)
					}
					continue
				}
				got.Add(1)
				n := inside.Add(1)
				for m := maxInside.Load(); n > m && !maxInside.CompareAndSwap(m, n); m = maxInside.Load() {
				}
				mu.Lock()
				seqs = append(seqs, lease.Seq)
				mu.Unlock()
				time.Sleep(time.Millisecond)
				inside.Add(-1)
				if err := l.Release(ctx, lease); err != nil {
					t.Errorf("release: %v", err)
				}
			}
		})
	}
	wg.Wait()
	if m := maxInside.Load(); m != 1 {
		t.Fatalf("%d workers were inside at once", m)
	}
	return seqs, got.Load()
}

// logTails prints the end of every node's log, so that a failure in CI,
// where the containers are gone afterwards, says what the nodes saw.
func logTails(t testing.TB, c *cluster.Cluster) {
	dir, err := os.MkdirTemp("", "deadbolt-logs-")
	if err != nil {
		t.Logf("no node logs: %v", err)
		return
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.SaveLogs(ctx, dir); err != nil {
		t.Logf("node logs: %v", err)
	}
	for _, n := range c.Nodes {
		b, err := os.ReadFile(filepath.Join(dir, n.Name+".log"))
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		t.Logf("last lines of %s's log:\n%s", n.Name, strings.Join(lines[max(0, len(lines)-25):], "\n"))
	}
}

// IsolateReplicas cuts every replica of the master off from it (and from
// the Sentinels), not the master: there is nothing to fail over, and the
// master stays the node clients write to. c.HealAll undoes it.
func IsolateReplicas(t testing.TB, c *cluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	rs, err := c.Replicas(ctx)
	if err != nil {
		t.Fatalf("find the replicas: %v", err)
	}
	for _, n := range rs {
		if err := n.Isolate(ctx); err != nil {
			t.Fatalf("isolate %s: %v", n.Name, err)
		}
	}
}
