package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"

	"github.com/deadbolt-lab/deadbolt/topology"
)

// sentinelConf names every node by hostname, so that Sentinel reports names
// the harness can map to published ports, and keeps working when a healed
// node comes back with another IP. The users, and how this Sentinel
// authenticates to the nodes and its peers, come from s (acl.go).
func sentinelConf(name, master string, quorum int, downAfter time.Duration, s Secrets, tls bool) string {
	lines := []string{
		"port 26379",
		"sentinel resolve-hostnames yes",
		"sentinel announce-hostnames yes",
		"sentinel announce-ip " + name,
		fmt.Sprintf("sentinel monitor %s %s 6379 %d", MasterName, master, quorum),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", MasterName, downAfter.Milliseconds()),
		fmt.Sprintf("sentinel failover-timeout %s %d", MasterName, topology.SentinelFailoverTimeout(downAfter).Milliseconds()),
		fmt.Sprintf("sentinel parallel-syncs %s 1", MasterName),
	}
	if tls {
		lines = append(lines, tlsConf(26379)...) // after "port": later lines win
	}
	return strings.Join(append(lines, append(s.SentinelConf(MasterName), "")...), "\n")
}

func (c *Cluster) startSentinel(ctx context.Context) error {
	master := "redis-1"
	for i := 1; i <= 1+c.Spec.Replicas; i++ {
		name := fmt.Sprintf("redis-%d", i)
		args := c.redisArgs(name)
		if name != master {
			args = append(args, "--replicaof", master, "6379")
		}
		if _, err := c.startNode(ctx, name, RoleRedis, 6379, args, nil); err != nil {
			return err
		}
	}
	for i := 1; i <= c.Spec.Sentinels; i++ {
		name := fmt.Sprintf("sentinel-%d", i)
		conf := sentinelConf(name, master, c.Spec.Quorum, c.Spec.DownAfter.D(), c.secrets, c.certs != nil)
		files := []testcontainers.ContainerFile{{
			Reader:            strings.NewReader(conf),
			ContainerFilePath: "/data/sentinel.conf",
			FileMode:          0o644,
		}}
		if _, err := c.startNode(ctx, name, RoleSentinel, 26379, []string{"/data/sentinel.conf"}, files); err != nil {
			return err
		}
	}
	// Sentinels learn about each other and the replicas through hello
	// messages; a failover before that would have no quorum.
	return c.WaitHealthy(ctx, 60*time.Second)
}
