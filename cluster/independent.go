package cluster

import (
	"context"
	"fmt"
)

// redisArgs runs Redis with no persistence at all: a restarted node comes
// back empty, which is the fault the independent topology models.
func redisArgs(name string) []string {
	return []string{
		"--port", "6379",
		"--save", "",
		"--appendonly", "no",
		"--protected-mode", "no",
		"--replica-announce-ip", name,
		"--repl-diskless-sync", "yes",
		"--repl-diskless-sync-delay", "0",
	}
}

func (c *Cluster) startIndependent(ctx context.Context) error {
	for i := 1; i <= c.Spec.Masters; i++ {
		name := fmt.Sprintf("redis-%d", i)
		if _, err := c.startNode(ctx, name, RoleRedis, 6379, redisArgs(name), nil); err != nil {
			return err
		}
	}
	return nil
}
