package cluster_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
)

// How long a pooled cluster's reset takes (the setup of a reused run),
// beside a fresh start of the same spec: before each reset a key is written
// on redis-1, so that the reset has data to flush, and (after-failover)
// Sentinel fails the master over, so that it has a shape to put back.
func BenchmarkReset(b *testing.B) {
	clustertest.RequireDocker(b)
	for _, tc := range []struct {
		name     string
		spec     cluster.Spec
		failover bool // a Sentinel failover before each reset, as most Sentinel runs leave
	}{
		{"independent", cluster.Spec{Topology: cluster.Independent, Masters: 5}, false},
		{"sentinel", cluster.Spec{Topology: cluster.Sentinel}, false},
		{"sentinel-after-failover", cluster.Spec{Topology: cluster.Sentinel}, true},
	} {
		spec := tc.spec
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			// b.Loop sets no b.N up front: tell the pool of more runs than
			// any benchmark time asks for, so that it keeps the cluster.
			p := cluster.NewPool(slices.Repeat([]cluster.Spec{spec}, 1000))
			defer p.Close(ctx)
			c, o, err := p.Get(ctx, spec)
			if err != nil {
				b.Fatal(err)
			}
			start := o.Setup
			var reset time.Duration
			n := 0
			for b.Loop() {
				b.StopTimer()
				rdb := c.ByRole(cluster.RoleRedis)[0].Client()
				err := rdb.Set(ctx, "left-by-a-run", "1", 0).Err()
				rdb.Close()
				if err == nil && tc.failover {
					failOver(b, c)
				}
				if err == nil {
					err = p.Put(ctx, c, true)
				}
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				c, o, err = p.Get(ctx, spec)
				if err != nil {
					b.Fatal(err)
				}
				if !o.Reused {
					b.Fatalf("the pool started a fresh cluster: %s", o.Fallback)
				}
				reset += o.Setup
				n++
			}
			b.ReportMetric(start.Seconds(), "s/start")
			b.ReportMetric(reset.Seconds()/float64(n), "s/reset")
			if err := p.Put(ctx, c, false); err != nil {
				b.Fatal(err)
			}
		})
	}
}
