package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
)

// How long each topology takes from nothing to healthy (containers started,
// the cluster formed, Sentinels or cluster nodes agreeing), side by side;
// removal is outside the timing.
func BenchmarkStart(b *testing.B) {
	clustertest.RequireDocker(b)
	for _, spec := range []cluster.Spec{
		{Topology: cluster.Independent, Masters: 5},
		{Topology: cluster.Sentinel},
		{Topology: cluster.RedisCluster, PrimaryKey: "k2"},
	} {
		b.Run(spec.Topology, func(b *testing.B) {
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				start := time.Now()
				c, err := cluster.Start(ctx, spec)
				elapsed := time.Since(start)
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				b.ReportMetric(elapsed.Seconds(), "s/start")
				if err := c.Close(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
