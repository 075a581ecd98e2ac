package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// reset brings a cluster that has run a scenario back to what fresh, its
// snapshot when it was new, says: every fault healed, clocks and links
// back, the fresh replication shape, no data, scripts, clients or logs of
// the run before, the configuration as started, and Sentinels restarted
// from a fresh configuration. It fails, and the pool starts a new cluster
// instead, when it cannot make the cluster compare equal to fresh.
func (c *Cluster) reset(ctx context.Context, fresh Snapshot) error {
	if c.d == nil || c.target != nil {
		return errors.New("the cluster is closed or attached")
	}
	// The next run's saved logs start here (SaveLogs).
	c.logsSince = time.Now()
	if c.Spec.Topology == RedisCluster {
		// A failover or a slot migration changed the slot map; putting it
		// back (failovers back, slots migrated back, epochs) takes longer
		// than forming a new cluster, and could differ in ways no check
		// here sees.
		if err := c.sameShape(ctx, fresh); err != nil {
			return err
		}
	}
	if err := c.HealAll(ctx); err != nil {
		return err
	}
	// Sentinels go first, so that none acts on the reshaping below, and
	// come back from a fresh configuration: a Sentinel remembers epochs,
	// the failover it led (it waits twice the failover timeout before
	// another), its peers' ids and TILT, none of which a fresh one has.
	sentinels := c.ByRole(RoleSentinel)
	if err := each(sentinels, func(s *Node) error { return s.Kill(ctx) }); err != nil {
		return err
	}
	if c.Spec.ClockFaults {
		for _, n := range c.ByRole(RoleRedis) {
			if err := n.SetClock(ctx, 0); err != nil {
				return err
			}
		}
	}
	if err := c.reshape(ctx, fresh); err != nil {
		return err
	}
	for _, n := range c.Nodes {
		if n.Role == RoleSentinel {
			continue
		}
		if err := n.wipe(ctx, fresh[n.Name]); err != nil {
			return err
		}
	}
	if err := each(sentinels, func(s *Node) error {
		conf := sentinelConf(s.Name, "redis-1", c.Spec.Quorum, c.Spec.DownAfter.D(), c.secrets, c.certs != nil)
		if err := s.c.CopyToContainer(ctx, []byte(conf), "/data/sentinel.conf", 0o644); err != nil {
			return fmt.Errorf("fresh sentinel.conf for %s: %w", s.Name, err)
		}
		return s.Start(ctx)
	}); err != nil {
		return err
	}
	if err := c.WaitHealthy(ctx, time.Minute); err != nil {
		return err
	}
	if c.Spec.ClockFaults {
		if err := c.clocksBack(ctx); err != nil {
			return err
		}
	}
	// Replicas reach no keys as they sync; Sentinels learn their peers.
	return c.until(ctx, 30*time.Second, func() error {
		now, err := c.Snapshot(ctx)
		if err != nil {
			return err
		}
		if d := now.Diff(fresh); d != "" {
			return fmt.Errorf("the reset cluster differs from its fresh self: %s", d)
		}
		return nil
	})
}

// sameShape checks that a Redis Cluster still has its fresh masters,
// replicas and slot map.
func (c *Cluster) sameShape(ctx context.Context, fresh Snapshot) error {
	now, err := c.Snapshot(ctx)
	if err != nil {
		return err
	}
	for name, want := range fresh {
		if got := now[name]; got.Role != want.Role || got.Slots != want.Slots {
			return fmt.Errorf("the Redis Cluster changed shape: %s is %q serving %q, was %q serving %q", name, got.Role, got.Slots, want.Role, want.Slots)
		}
	}
	return nil
}

// reshape makes the fresh masters masters and the fresh replicas follow
// them again (Sentinel: redis-1 the master; independent: every node a
// master). A Redis Cluster's shape is checked before (sameShape).
func (c *Cluster) reshape(ctx context.Context, fresh Snapshot) error {
	if c.Spec.Topology == RedisCluster {
		return nil
	}
	var masters, replicas []*Node
	for _, n := range c.ByRole(RoleRedis) {
		if fresh[n.Name].Role == "master" {
			masters = append(masters, n)
		} else {
			replicas = append(replicas, n)
		}
	}
	for _, group := range [][]*Node{masters, replicas} {
		for _, n := range group {
			want := fresh[n.Name].Role
			r, err := n.replication(ctx)
			if err != nil {
				return err
			}
			follows := "replica of " + n.cl.nameOf(r.masterHost)
			if (r.role == "master" && want == "master") || (r.role == "slave" && follows == want) {
				continue
			}
			args := []any{"REPLICAOF", "NO", "ONE"}
			if want != "master" {
				args = []any{"REPLICAOF", strings.TrimPrefix(want, "replica of "), 6379}
			}
			rdb := n.Client()
			err = rdb.Do(ctx, args...).Err()
			rdb.Close()
			if err != nil {
				return fmt.Errorf("%v on %s: %w", args, n.Name, err)
			}
		}
	}
	return nil
}

// wipe empties a Redis node of what a run left: its keys and functions
// (on a master; replicas follow), scripts, the run's client connections
// and the statistics and logs a report could read; and sets back any
// setting that differs from the fresh one.
func (n *Node) wipe(ctx context.Context, fresh NodeState) error {
	rdb := n.Client()
	defer rdb.Close()
	cmds := [][]any{
		// The harness's own connection stays (SKIPME); replicas and
		// masters are not "normal" clients.
		{"CLIENT", "KILL", "TYPE", "normal"},
		{"CLIENT", "KILL", "TYPE", "pubsub"},
		{"SCRIPT", "FLUSH", "SYNC"},
		{"ACL", "LOG", "RESET"},
		{"SLOWLOG", "RESET"},
		{"LATENCY", "RESET"},
		{"CONFIG", "RESETSTAT"},
	}
	if fresh.Role == "master" {
		cmds = append(cmds, []any{"FLUSHALL", "SYNC"}, []any{"FUNCTION", "FLUSH", "SYNC"})
	}
	for _, args := range cmds {
		if err := rdb.Do(ctx, args...).Err(); err != nil && !strings.Contains(err.Error(), "No such client") {
			return fmt.Errorf("%v on %s: %w", args, n.Name, err)
		}
	}
	now, err := rdb.ConfigGet(ctx, "*").Result()
	if err != nil {
		return fmt.Errorf("CONFIG GET on %s: %w", n.Name, err)
	}
	for _, k := range configDiff(now, fresh.Config) {
		if err := rdb.ConfigSet(ctx, k, fresh.Config[k]).Err(); err != nil {
			return fmt.Errorf("CONFIG SET %s on %s back to %q: %w", k, n.Name, fresh.Config[k], err)
		}
	}
	return nil
}

// clocksBack waits until every clock-faulted node's wall clock is the
// host's again (clockshift reads its offset every 100 ms).
func (c *Cluster) clocksBack(ctx context.Context) error {
	return c.until(ctx, 5*time.Second, func() error {
		for _, n := range c.ByRole(RoleRedis) {
			t, err := n.Now(ctx)
			if err != nil {
				return err
			}
			if d := time.Since(t); d > time.Second || d < -time.Second {
				return fmt.Errorf("%s's clock is %s off", n.Name, d)
			}
		}
		return nil
	})
}

// each runs do on every node at once (a container's stop or start is
// mostly waiting on the engine) and joins their errors.
func each(nodes []*Node, do func(*Node) error) error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { errs[i] = do(n) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
