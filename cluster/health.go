package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// HealAll heals every node (see Node.Heal) and every link.
func (c *Cluster) HealAll(ctx context.Context) error {
	if c.links != nil {
		c.links.HealAll(ctx)
	}
	var errs []error
	for _, n := range c.Nodes {
		errs = append(errs, n.Heal(ctx))
	}
	return errors.Join(errs...)
}

// WaitHealthy waits until every node answers PING and each master group has
// exactly one master that every replica and Sentinel follows.
func (c *Cluster) WaitHealthy(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := c.Healthy(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster %s not healthy after %s: %w", c.Run, timeout, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Healthy checks the cluster once.
func (c *Cluster) Healthy(ctx context.Context) error {
	for _, n := range c.Nodes {
		if err := n.Ping(ctx); err != nil {
			return err
		}
	}
	roles := map[string]replication{}
	for _, n := range c.ByRole(RoleRedis) {
		r, err := n.replication(ctx)
		if err != nil {
			return err
		}
		roles[n.Name] = r
	}
	if err := c.shapeHealthy(ctx, roles); err != nil {
		return err
	}
	// The shape is right; the masters must also take a lock's writes.
	for _, n := range c.ByRole(RoleRedis) {
		if roles[n.Name].role == "master" {
			if err := n.writable(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// shapeHealthy checks the topology's shape: who is master, who follows it,
// and that the Sentinels or the cluster bus agree.
func (c *Cluster) shapeHealthy(ctx context.Context, roles map[string]replication) error {
	if c.Spec.Topology == RedisCluster {
		return c.clusterHealthy(ctx)
	}
	if c.Spec.Topology == Independent {
		for name, r := range roles {
			if r.role != "master" {
				return fmt.Errorf("%s is %s, want an independent master", name, r.role)
			}
		}
		return nil
	}
	master, err := c.Master(ctx)
	if err != nil {
		return err
	}
	for name, r := range roles {
		switch {
		case name == master.Name && r.role != "master":
			return fmt.Errorf("Sentinel's master %s reports role %s", name, r.role)
		case name != master.Name && r.role != "slave":
			return fmt.Errorf("%s is a %s beside master %s", name, r.role, master.Name)
		case name != master.Name && (net.JoinHostPort(r.masterHost, r.masterPort) != master.Logical() || r.link != "up"):
			return fmt.Errorf("replica %s follows %q, link %q; want %s, up", name, net.JoinHostPort(r.masterHost, r.masterPort), r.link, master.Logical())
		}
	}
	for _, s := range c.ByRole(RoleSentinel) {
		if err := s.sentinelSees(ctx, c.Spec.Replicas, c.Spec.Sentinels-1); err != nil {
			return err
		}
	}
	return nil
}

// Master asks every Sentinel for the master. The answers must agree, and a
// majority of the Sentinels must give one: a slow or isolated Sentinel does
// not stop the question, a split one does. On the cluster topology it is
// the master of Spec.PrimaryKey's slot that a majority of the nodes names.
func (c *Cluster) Master(ctx context.Context) (*Node, error) {
	if c.Spec.Topology == RedisCluster {
		return c.slotMaster(ctx)
	}
	if c.Spec.Topology != Sentinel {
		return nil, fmt.Errorf("topology %s has no single master", c.Spec.Topology)
	}
	sentinels := c.ByRole(RoleSentinel)
	var name string
	var answered int
	var errs []error
	for _, s := range sentinels {
		got, err := s.sentinelMaster(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if name != "" && got != name {
			return nil, fmt.Errorf("Sentinels disagree on the master: %s and %s", name, got)
		}
		name = got
		answered++
	}
	if answered <= len(sentinels)/2 {
		return nil, fmt.Errorf("only %d of %d Sentinels named a master: %w", answered, len(sentinels), errors.Join(errs...))
	}
	for _, n := range c.ByRole(RoleRedis) {
		if n.Logical() == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("Sentinel's master %s is no node of run %s", name, c.Run)
}

// Replicas are the nodes that follow the master (Master): on the cluster
// topology, the replicas of its shard only.
func (c *Cluster) Replicas(ctx context.Context) ([]*Node, error) {
	m, err := c.Master(ctx)
	if err != nil {
		return nil, err
	}
	if c.Spec.Topology == RedisCluster {
		return c.slotReplicas(ctx, m)
	}
	var rs []*Node
	for _, n := range c.ByRole(RoleRedis) {
		if n.Name != m.Name {
			rs = append(rs, n)
		}
	}
	return rs, nil
}

type replication struct{ role, masterHost, masterPort, link string }

// writable checks that master n takes the writes a lock makes. A DEL of a
// key nobody uses, a write that changes nothing, is refused as a lock's SET
// would be: NOREPLICAS while fewer replicas than min-replicas-to-write
// have acknowledged within the lag (after a failover, until they resync),
// MISCONF after a failed save, READONLY. A Redis Cluster node answers
// MOVED for a key it does not serve before it looks at its replicas, so
// there its good replicas are counted against min-replicas-to-write too.
// On an attached deployment the rights are the owner's: not checked.
func (n *Node) writable(ctx context.Context) error {
	if n.cl.target != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	rdb := n.Client()
	defer rdb.Close()
	if err := rdb.Del(ctx, "deadbolt-health:write-probe").Err(); err != nil && !isReply(err, "MOVED ", "ASK ") {
		return fmt.Errorf("%s refuses writes: %w", n.Name, err)
	}
	cfg, err := rdb.ConfigGet(ctx, "min-replicas-to-write").Result()
	if err != nil {
		return fmt.Errorf("CONFIG GET min-replicas-to-write on %s: %w", n.Name, err)
	}
	want, _ := strconv.Atoi(cfg["min-replicas-to-write"])
	if want == 0 {
		return nil
	}
	info, err := rdb.Info(ctx, "replication").Result()
	if err != nil {
		return fmt.Errorf("INFO replication on %s: %w", n.Name, err)
	}
	if good, err := strconv.Atoi(infoFields(info)["min_slaves_good_slaves"]); err != nil || good < want {
		return fmt.Errorf("%s has %d good replicas, fewer than its min-replicas-to-write %d: it refuses writes (NOREPLICAS)", n.Name, good, want)
	}
	return nil
}

// replication asks the node its ROLE, a right the lock user has too (the
// rueidis client asks it), so that an attached deployment's health is
// judged with the credentials its lock users get; INFO would need more.
func (n *Node) replication(ctx context.Context) (replication, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	rdb := n.Client()
	defer rdb.Close()
	reply, err := rdb.Do(ctx, "ROLE").Slice()
	if err != nil || len(reply) == 0 {
		return replication{}, fmt.Errorf("ROLE on %s: %v %v", n.Name, reply, err)
	}
	r := replication{role: fmt.Sprint(reply[0])}
	// A replica: slave, master host, master port, link state, offset. Its
	// link is up ("connected") once the sync is done, as INFO's
	// master_link_status says "up".
	if r.role == "slave" && len(reply) >= 4 {
		r.masterHost, r.masterPort = fmt.Sprint(reply[1]), fmt.Sprint(reply[2])
		if r.link = fmt.Sprint(reply[3]); r.link == "connected" {
			r.link = "up"
		}
	}
	return r, nil
}

func (n *Node) sentinelMaster(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	rdb := n.Client()
	defer rdb.Close()
	addr, err := rdb.Do(ctx, "SENTINEL", "get-master-addr-by-name", n.cl.masterName()).StringSlice()
	if err != nil || len(addr) != 2 {
		return "", fmt.Errorf("%s: get-master-addr-by-name: %v %v", n.Name, addr, err)
	}
	return net.JoinHostPort(addr[0], addr[1]), nil
}

// sentinelSees checks that a Sentinel knows every replica and peer as up,
// without which it could not fail over.
func (n *Node) sentinelSees(ctx context.Context, replicas, peers int) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	rdb := n.Client()
	defer rdb.Close()
	for _, q := range []struct {
		what string
		want int
	}{{"replicas", replicas}, {"sentinels", peers}} {
		res, err := rdb.Do(ctx, "SENTINEL", q.what, n.cl.masterName()).Slice()
		if err != nil {
			return fmt.Errorf("%s: SENTINEL %s: %w", n.Name, q.what, err)
		}
		up := 0
		for _, r := range res {
			if flags := fieldOf(r, "flags"); !strings.Contains(flags, "down") && !strings.Contains(flags, "disconnected") {
				up++
			}
		}
		if up != q.want {
			return fmt.Errorf("%s sees %d of %d %s up", n.Name, up, q.want, q.what)
		}
	}
	return nil
}

// fieldOf reads a field of a SENTINEL reply entry, which RESP2 gives as a
// flat list and RESP3 as a map.
func fieldOf(entry any, key string) string {
	switch e := entry.(type) {
	case map[any]any:
		v, _ := e[key].(string)
		return v
	case []any:
		for i := 0; i+1 < len(e); i += 2 {
			if k, _ := e[i].(string); k == key {
				v, _ := e[i+1].(string)
				return v
			}
		}
	}
	return ""
}
