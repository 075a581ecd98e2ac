// Package clustertest starts real clusters for tests. A test that needs
// Docker skips with the reason when no engine or image is there, except
// under CI=true, where the missing engine is a failure.
package clustertest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
)

// Start starts spec and removes it when the test ends.
func Start(t testing.TB, spec cluster.Spec) *cluster.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := cluster.Available(ctx); err != nil {
		unavailable(t, err)
	}
	c, err := cluster.Start(ctx, spec)
	if err != nil {
		t.Fatalf("start %s cluster: %v", spec.Topology, err)
	}
	t.Cleanup(func() {
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("remove cluster %s: %v", c.Run, err)
		}
	})
	return c
}

func unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but Docker is needed: %v", err)
	}
	t.Skipf("skipping: needs a Docker engine: %v", err)
}
