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
	RequireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
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
