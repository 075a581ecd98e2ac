package cluster

import (
	"context"
	"fmt"
)

// redisArgs configures a lock-service node of any topology, persisting and
// replicating as the spec says, with the run's users and passwords (acl.go).
func (c *Cluster) redisArgs(name string) []string {
	args := append(redisArgs(name), persistenceArgs(c.Spec.Persistence)...)
	args = append(args, replicationArgs(c.Spec.Replication)...)
	return append(args, c.secrets.RedisArgs()...)
}

// redisArgs configures a node that keeps nothing across a restart (the
// resource node, and the base of every lock-service node).
func redisArgs(name string) []string {
	return []string{
		"--port", "6379",
		"--save", "",
		"--appendonly", "no",
		"--replica-announce-ip", name,
		"--repl-diskless-sync-delay", "0",
	}
}

func (c *Cluster) startIndependent(ctx context.Context) error {
	for i := 1; i <= c.Spec.Masters; i++ {
		name := fmt.Sprintf("redis-%d", i)
		if _, err := c.startNode(ctx, name, RoleRedis, 6379, c.redisArgs(name), nil); err != nil {
			return err
		}
	}
	return nil
}
