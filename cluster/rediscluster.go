package cluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The cluster topology is one Redis Cluster: Masters shards, each master
// with Replicas replicas, failing over by the cluster's own election (no
// Sentinel). Nodes gossip on the nodes network (cluster bus, port 16379),
// so isolating a master cuts it off from its replicas and the other masters
// while clients still reach it. Every node announces its hostname
// (cluster-preferred-endpoint-type hostname): MOVED, ASK and CLUSTER SLOTS
// name "redis-N:6379", which the Dialer maps to the published port.

// clusterSlots is the number of hash slots of a Redis Cluster.
const clusterSlots = 16384

// clusterArgs make a node a cluster member, announcing its fixed address on
// the nodes network and its name.
func (c *Cluster) clusterArgs(name string) []string {
	return []string{
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", strconv.FormatInt(c.Spec.DownAfter.D().Milliseconds(), 10),
		"--cluster-announce-ip", c.hosts.addrs[name].String(),
		"--cluster-announce-hostname", name,
		"--cluster-preferred-endpoint-type", "hostname",
	}
}

func (c *Cluster) startRedisCluster(ctx context.Context) error {
	for _, name := range c.Spec.NodeNames() {
		if name == ResourceName {
			continue // Start starts it beside the cluster
		}
		if _, err := c.startNode(ctx, name, RoleRedis, 6379, append(c.redisArgs(name), c.clusterArgs(name)...), nil); err != nil {
			return err
		}
	}
	if err := c.formCluster(ctx); err != nil {
		return fmt.Errorf("form the Redis Cluster: %w", err)
	}
	if err := c.WaitHealthy(ctx, 60*time.Second); err != nil {
		return err
	}
	if c.Spec.PrimaryKey != "" {
		slot, err := c.Slot(ctx, c.Spec.PrimaryKey)
		if err != nil {
			return err
		}
		c.primarySlot = slot
	}
	return nil
}

// formCluster does what redis-cli --cluster create does: distinct config
// epochs, slot ranges to the masters, every node met, replicas attached.
func (c *Cluster) formCluster(ctx context.Context) error {
	nodes := c.ByRole(RoleRedis)
	m := c.Spec.Masters
	for i, n := range nodes {
		rdb := n.PatientClient()
		err := rdb.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err()
		if err == nil && i < m {
			lo, hi := i*clusterSlots/m, (i+1)*clusterSlots/m-1
			err = rdb.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err()
		}
		rdb.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	first := nodes[0].PatientClient()
	defer first.Close()
	for _, n := range nodes[1:] {
		if err := first.Do(ctx, "CLUSTER", "MEET", c.hosts.addrs[n.Name].String(), 6379).Err(); err != nil {
			return fmt.Errorf("CLUSTER MEET %s: %w", n.Name, err)
		}
	}
	// A replica can follow only a master it knows.
	if err := c.until(ctx, 30*time.Second, func() error {
		for _, n := range nodes {
			v, err := n.clusterView(ctx)
			if err != nil {
				return err
			}
			if len(v.nodes) != len(nodes) {
				return fmt.Errorf("%s knows %d of %d nodes", n.Name, len(v.nodes), len(nodes))
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for k, n := range nodes[m:] {
		master := nodes[k%m]
		mc := master.PatientClient()
		id, err := mc.Do(ctx, "CLUSTER", "MYID").Text()
		mc.Close()
		if err != nil {
			return fmt.Errorf("CLUSTER MYID on %s: %w", master.Name, err)
		}
		rdb := n.PatientClient()
		err = rdb.Do(ctx, "CLUSTER", "REPLICATE", id).Err()
		rdb.Close()
		if err != nil {
			return fmt.Errorf("CLUSTER REPLICATE %s on %s: %w", master.Name, n.Name, err)
		}
	}
	return nil
}

// until retries check every 100 ms until it passes or timeout has gone.
func (c *Cluster) until(ctx context.Context, timeout time.Duration, check func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := check()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// clusterNode is one line of CLUSTER NODES: how one node sees another.
type clusterNode struct {
	name   string // the announced hostname
	flags  string
	master string // the name of the master it follows, "" for a master
	epoch  string
	slots  []string
}

func (cn clusterNode) isMaster() bool { return strings.Contains(cn.flags, "master") }

// clusterView is one node's CLUSTER NODES, by node name.
type clusterView struct {
	nodes map[string]clusterNode
}

func (n *Node) clusterView(ctx context.Context) (clusterView, error) {
	rdb := n.Client()
	defer rdb.Close()
	return viewOf(ctx, n.Name, rdb)
}

func viewOf(ctx context.Context, name string, rdb redis.UniversalClient) (clusterView, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	text, err := rdb.Do(ctx, "CLUSTER", "NODES").Text()
	if err != nil {
		return clusterView{}, fmt.Errorf("CLUSTER NODES on %s: %w", name, err)
	}
	return parseClusterNodes(text)
}

// parseClusterNodes reads CLUSTER NODES: "<id> <ip:port@cport,hostname>
// <flags> <master id|-> <ping> <pong> <epoch> <link> <slot>...".
func parseClusterNodes(text string) (clusterView, error) {
	v := clusterView{nodes: map[string]clusterNode{}}
	names := map[string]string{} // id -> hostname
	var lines [][]string
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			return v, fmt.Errorf("bad CLUSTER NODES line %q", line)
		}
		_, host, ok := strings.Cut(f[1], ",")
		if !ok || host == "" {
			host = f[1] // a node whose hostname is not known yet
		}
		names[f[0]] = host
		lines = append(lines, f)
	}
	for _, f := range lines {
		cn := clusterNode{name: names[f[0]], flags: f[2], epoch: f[6], slots: f[8:]}
		if f[3] != "-" {
			cn.master = names[f[3]]
			if cn.master == "" {
				cn.master = f[3]
			}
		}
		v.nodes[cn.name] = cn
	}
	return v, nil
}

// owner is the master that serves slot in this view, "" if none.
func (v clusterView) owner(slot int) string {
	for _, cn := range v.nodes {
		if !cn.isMaster() {
			continue
		}
		for _, r := range cn.slots {
			if strings.HasPrefix(r, "[") {
				continue // a slot being migrated or imported
			}
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil && a <= slot && slot <= b {
				return cn.name
			}
		}
	}
	return ""
}

// clusterHealthy: every slot served, every node in state ok and agreeing on
// who is master of what, with which epoch; each master has its replicas,
// each replica's link to its master up.
func (c *Cluster) clusterHealthy(ctx context.Context) error {
	nodes := c.ByRole(RoleRedis)
	var ref clusterView
	for i, n := range nodes {
		info, err := n.clusterInfo(ctx)
		if err != nil {
			return err
		}
		if info["cluster_state"] != "ok" || info["cluster_slots_ok"] != strconv.Itoa(clusterSlots) {
			return fmt.Errorf("%s: cluster_state %s, %s of %d slots ok", n.Name, info["cluster_state"], info["cluster_slots_ok"], clusterSlots)
		}
		v, err := n.clusterView(ctx)
		if err != nil {
			return err
		}
		if len(v.nodes) != len(nodes) {
			return fmt.Errorf("%s knows %d of %d nodes", n.Name, len(v.nodes), len(nodes))
		}
		for name, cn := range v.nodes {
			if strings.Contains(cn.flags, "fail") || strings.Contains(cn.flags, "handshake") || strings.Contains(cn.flags, "noaddr") {
				return fmt.Errorf("%s sees %s as %s", n.Name, name, cn.flags)
			}
		}
		if i == 0 {
			ref = v
			continue
		}
		for name, want := range ref.nodes {
			got := v.nodes[name]
			if got.isMaster() != want.isMaster() || got.master != want.master || (want.isMaster() && (got.epoch != want.epoch || strings.Join(got.slots, " ") != strings.Join(want.slots, " "))) {
				return fmt.Errorf("%s and %s disagree on %s", n.Name, nodes[0].Name, name)
			}
		}
	}
	replicas := map[string]int{}
	masters := 0
	for _, cn := range ref.nodes {
		if cn.isMaster() {
			masters++
		} else {
			replicas[cn.master]++
		}
	}
	if masters != c.Spec.Masters {
		return fmt.Errorf("the cluster has %d masters, want %d", masters, c.Spec.Masters)
	}
	for name, cn := range ref.nodes {
		if cn.isMaster() && replicas[name] != c.Spec.Replicas {
			return fmt.Errorf("master %s has %d replicas, want %d", name, replicas[name], c.Spec.Replicas)
		}
	}
	for _, n := range nodes {
		cn := ref.nodes[n.Name]
		if cn.isMaster() {
			continue
		}
		r, err := n.replication(ctx)
		if err != nil {
			return err
		}
		// Replicas of a cluster follow their master's address, not its name.
		if r.role != "slave" || r.link != "up" || r.masterHost != c.hosts.addrs[cn.master].String() {
			return fmt.Errorf("replica %s: role %s, follows %q, link %q; want %s, up", n.Name, r.role, r.masterHost, r.link, cn.master)
		}
	}
	return nil
}

func (n *Node) clusterInfo(ctx context.Context) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	rdb := n.Client()
	defer rdb.Close()
	text, err := rdb.Do(ctx, "CLUSTER", "INFO").Text()
	if err != nil {
		return nil, fmt.Errorf("CLUSTER INFO on %s: %w", n.Name, err)
	}
	return infoFields(text), nil
}

// Slot is the hash slot of key, as the cluster computes it.
func (c *Cluster) Slot(ctx context.Context, key string) (int, error) {
	var errs []string
	for _, n := range c.ByRole(RoleRedis) {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		rdb := n.Client()
		slot, err := rdb.Do(cctx, "CLUSTER", "KEYSLOT", key).Int()
		rdb.Close()
		cancel()
		if err == nil {
			return slot, nil
		}
		errs = append(errs, err.Error())
	}
	return 0, fmt.Errorf("no node computed the slot of %q: %s", key, strings.Join(errs, "; "))
}

// slotMaster is the master of the primary key's slot as a majority of the
// nodes sees it: an isolated old master still calls itself master, and
// must not outvote the rest. The nodes are asked at once, so a frozen one
// costs one timeout, not one each.
func (c *Cluster) slotMaster(ctx context.Context) (*Node, error) {
	return c.slotMasterBy(ctx, (*Node).clusterView)
}

// slotMasterBy is slotMaster with each node's view read by view.
func (c *Cluster) slotMasterBy(ctx context.Context, view func(*Node, context.Context) (clusterView, error)) (*Node, error) {
	if c.Spec.PrimaryKey == "" {
		return nil, fmt.Errorf("the cluster topology names its primary by a key's slot, and the spec has no primary_key")
	}
	nodes := c.ByRole(RoleRedis)
	type answer struct {
		owner string
		err   error
	}
	answers := make(chan answer, len(nodes))
	for _, n := range nodes {
		go func() {
			v, err := view(n, ctx)
			answers <- answer{v.owner(c.primarySlot), err}
		}()
	}
	votes := map[string]int{}
	var errs []string
	for range nodes {
		a := <-answers
		switch {
		case a.err != nil:
			errs = append(errs, a.err.Error())
		case a.owner != "":
			votes[a.owner]++
		}
	}
	for name, k := range votes {
		if k > len(nodes)/2 {
			return c.Node(name)
		}
	}
	return nil, fmt.Errorf("no majority of the %d nodes names a master of slot %d (votes %v; %s)", len(nodes), c.primarySlot, votes, strings.Join(errs, "; "))
}

// slotReplicas are the nodes that follow the primary key's slot master.
func (c *Cluster) slotReplicas(ctx context.Context, master *Node) ([]*Node, error) {
	v, err := master.clusterView(ctx)
	if err != nil {
		return nil, err
	}
	var out []*Node
	for _, n := range c.ByRole(RoleRedis) {
		if v.nodes[n.Name].master == master.Name {
			out = append(out, n)
		}
	}
	return out, nil
}

// watchSlotMaster polls who masters the primary key's slot, as a majority
// of the nodes sees it, and reports each switch as a "+switch-master" from
// "cluster". A Redis Cluster announces no failover on a channel a client
// could subscribe to, and the harness must not take a node's word alone.
func (c *Cluster) watchSlotMaster(ctx context.Context, seen func(SentinelEvent)) {
	if c.Spec.PrimaryKey == "" {
		return
	}
	clients := map[*Node]redis.UniversalClient{}
	for _, n := range c.ByRole(RoleRedis) {
		clients[n] = n.Client()
		defer clients[n].Close()
	}
	// The same connections every 200 ms, not new ones each time.
	view := func(n *Node, ctx context.Context) (clusterView, error) { return viewOf(ctx, n.Name, clients[n]) }
	last := ""
	for {
		if m, err := c.slotMasterBy(ctx, view); err == nil {
			if last != "" && m.Name != last {
				seen(SentinelEvent{Sentinel: "cluster", Kind: "+switch-master", From: last, To: m.Name})
			}
			last = m.Name
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// PrimarySlot is the hash slot of Spec.PrimaryKey.
func (c *Cluster) PrimarySlot() (int, error) {
	if c.Spec.Topology != RedisCluster || c.Spec.PrimaryKey == "" {
		return 0, fmt.Errorf("only the cluster topology with a primary key has a primary slot")
	}
	return c.primarySlot, nil
}

// Masters are the cluster's masters as a majority of the nodes sees them.
func (c *Cluster) Masters(ctx context.Context) ([]*Node, error) {
	m, err := c.Master(ctx)
	if err != nil {
		return nil, err
	}
	v, err := m.clusterView(ctx)
	if err != nil {
		return nil, err
	}
	var out []*Node
	for _, n := range c.ByRole(RoleRedis) {
		if cn, ok := v.nodes[n.Name]; ok && cn.isMaster() && len(cn.slots) > 0 {
			out = append(out, n)
		}
	}
	return out, nil
}

// MigrateSlot moves slot from src to dst as redis-cli --cluster reshard
// does: dst IMPORTING, src MIGRATING, each key MIGRATEd (pause apart), then
// both and every other master told the slot's new owner.
func (c *Cluster) MigrateSlot(ctx context.Context, slot int, src, dst *Node, pause time.Duration) error {
	id := func(n *Node) (string, error) {
		rdb := n.Client()
		defer rdb.Close()
		return rdb.Do(ctx, "CLUSTER", "MYID").Text()
	}
	srcID, err := id(src)
	if err != nil {
		return fmt.Errorf("CLUSTER MYID on %s: %w", src.Name, err)
	}
	dstID, err := id(dst)
	if err != nil {
		return fmt.Errorf("CLUSTER MYID on %s: %w", dst.Name, err)
	}
	s, d := src.Client(), dst.Client()
	defer s.Close()
	defer d.Close()
	if err := d.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID).Err(); err != nil {
		return fmt.Errorf("SETSLOT IMPORTING on %s: %w", dst.Name, err)
	}
	if err := s.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID).Err(); err != nil {
		return fmt.Errorf("SETSLOT MIGRATING on %s: %w", src.Name, err)
	}
	for {
		keys, err := s.Do(ctx, "CLUSTER", "GETKEYSINSLOT", slot, 1).StringSlice()
		if err != nil {
			return fmt.Errorf("GETKEYSINSLOT on %s: %w", src.Name, err)
		}
		if len(keys) == 0 {
			break
		}
		// The key moves with its TTL, atomically: it is on one node or the
		// other, never both. A key that expired meanwhile answers NOKEY.
		args := []any{"MIGRATE", c.hosts.addrs[dst.Name].String(), 6379, "", 0, 5000}
		args = append(args, c.migrateAuth()...)
		args = append(args, "KEYS", keys[0])
		if err := s.Do(ctx, args...).Err(); err != nil && err.Error() != "NOKEY" {
			return fmt.Errorf("MIGRATE %s to %s: %w", keys[0], dst.Name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
	// The new owner first, as redis-cli does, so that it never refuses the
	// slot it was given; then the old one, then every other master.
	order := []*Node{dst, src}
	for _, n := range c.ByRole(RoleRedis) {
		if n != dst && n != src {
			order = append(order, n)
		}
	}
	for i, n := range order {
		rdb := n.Client()
		err := rdb.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err()
		rdb.Close()
		// Replicas refuse SETSLOT: they follow their masters.
		if err != nil && (i < 2 || !isReplicaRefusal(err)) {
			return fmt.Errorf("SETSLOT NODE on %s: %w", n.Name, err)
		}
	}
	return nil
}

func isReplicaRefusal(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "slave") || strings.Contains(msg, "replica") || strings.Contains(msg, "only with masters")
}

// migrateAuth are MIGRATE's credentials for the destination node: the
// harness's admin user (RESTORE is no right of the lock user's).
func (c *Cluster) migrateAuth() []any {
	user, pass := c.Admin()
	return []any{"AUTH2", user, pass}
}

// infoFields reads the "field:value" lines of INFO and CLUSTER INFO.
func infoFields(info string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(info, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = v
		}
	}
	return out
}
