package cluster

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"time"
)

// Snapshot is what a run could find different between two clusters of one
// spec, by node name: roles and what each replica follows, the keys, the
// configuration, each Sentinel's view of its group, a Redis Cluster's slot
// map. The pool compares a reset cluster's with the one it took when the
// cluster was fresh; a test compares a fresh cluster's with a reused one's
// (Redacted).
type Snapshot map[string]NodeState

// NodeState is one node's part of a Snapshot.
type NodeState struct {
	// Role is "master", "replica of <name>" or "sentinel".
	Role string
	// Keys is DBSIZE (Redis nodes).
	Keys int64
	// Config is CONFIG GET * (Redis nodes).
	Config map[string]string `json:",omitempty"`
	// Slots are a Redis Cluster master's slot ranges.
	Slots string `json:",omitempty"`
	// Sentinel is a Sentinel's view of its master group.
	Sentinel *SentinelView `json:",omitempty"`
}

// SentinelView is what a Sentinel says of its master group.
type SentinelView struct {
	Master, Flags, Quorum, DownAfter, FailoverTimeout, ParallelSyncs string
	// Replicas and Sentinels are "name flags", sorted.
	Replicas, Sentinels []string
}

// perRunConfig are settings whose values are drawn per cluster (passwords,
// the nodes network's addresses): equal within one cluster's life, never
// between two clusters.
var perRunConfig = []string{"masterauth", "requirepass", "cluster-announce-ip"}

// Redacted is the snapshot with the per-cluster values masked, for
// comparing two clusters.
func (s Snapshot) Redacted() Snapshot {
	out := Snapshot{}
	for name, st := range s {
		if st.Config != nil {
			st.Config = maps.Clone(st.Config)
			for _, k := range perRunConfig {
				if st.Config[k] != "" {
					st.Config[k] = "(per cluster)"
				}
			}
		}
		out[name] = st
	}
	return out
}

// Diff names what differs from want, "" when nothing does.
func (s Snapshot) Diff(want Snapshot) string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		w, g := want[name], s[name]
		switch {
		case g.Role != w.Role:
			out = append(out, fmt.Sprintf("%s is %q, want %q", name, g.Role, w.Role))
		case g.Keys != w.Keys:
			out = append(out, fmt.Sprintf("%s has %d keys, want %d", name, g.Keys, w.Keys))
		case g.Slots != w.Slots:
			out = append(out, fmt.Sprintf("%s serves slots %q, want %q", name, g.Slots, w.Slots))
		case fmt.Sprint(g.Sentinel) != fmt.Sprint(w.Sentinel):
			out = append(out, fmt.Sprintf("%s sees %+v, want %+v", name, g.Sentinel, w.Sentinel))
		}
		for _, k := range configDiff(g.Config, w.Config) {
			out = append(out, fmt.Sprintf("%s config %s is %q, want %q", name, k, g.Config[k], w.Config[k]))
		}
	}
	return strings.Join(out, "; ")
}

// configDiff lists the settings whose values differ, sorted.
func configDiff(got, want map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if v, ok := got[k]; !ok || v != want[k] {
			out = append(out, k)
		}
	}
	return out
}

// Snapshot reads every node's state.
func (c *Cluster) Snapshot(ctx context.Context) (Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s := Snapshot{}
	var view clusterView
	if c.Spec.Topology == RedisCluster {
		v, err := c.ByRole(RoleRedis)[0].clusterView(ctx)
		if err != nil {
			return nil, err
		}
		view = v
	}
	for _, n := range c.Nodes {
		var st NodeState
		var err error
		if n.Role == RoleSentinel {
			st.Role = "sentinel"
			st.Sentinel, err = n.sentinelView(ctx)
		} else {
			st, err = n.redisState(ctx, view)
		}
		if err != nil {
			return nil, err
		}
		s[n.Name] = st
	}
	return s, nil
}

func (n *Node) redisState(ctx context.Context, view clusterView) (NodeState, error) {
	var st NodeState
	r, err := n.replication(ctx)
	if err != nil {
		return st, err
	}
	st.Role = "master"
	if r.role != "master" {
		st.Role = "replica of " + n.cl.nameOf(r.masterHost)
	}
	if cn, ok := view.nodes[n.Name]; ok && cn.isMaster() {
		st.Slots = strings.Join(cn.slots, " ")
	}
	rdb := n.Client()
	defer rdb.Close()
	if st.Keys, err = rdb.DBSize(ctx).Result(); err != nil {
		return st, fmt.Errorf("DBSIZE on %s: %w", n.Name, err)
	}
	if st.Config, err = rdb.ConfigGet(ctx, "*").Result(); err != nil {
		return st, fmt.Errorf("CONFIG GET on %s: %w", n.Name, err)
	}
	return st, nil
}

// nameOf names the node at a replica's master host, which is a name on
// Sentinel and independent topologies and an address on a Redis Cluster.
func (c *Cluster) nameOf(host string) string {
	if c.hosts != nil {
		for name, a := range c.hosts.addrs {
			if a.String() == host {
				return name
			}
		}
	}
	return host
}

func (n *Node) sentinelView(ctx context.Context) (*SentinelView, error) {
	rdb := n.Client()
	defer rdb.Close()
	group := n.cl.masterName()
	m, err := rdb.Do(ctx, "SENTINEL", "MASTER", group).Result()
	if err != nil {
		return nil, fmt.Errorf("%s: SENTINEL MASTER: %w", n.Name, err)
	}
	v := &SentinelView{
		Master:          net.JoinHostPort(fieldOf(m, "ip"), fieldOf(m, "port")),
		Flags:           fieldOf(m, "flags"),
		Quorum:          fieldOf(m, "quorum"),
		DownAfter:       fieldOf(m, "down-after-milliseconds"),
		FailoverTimeout: fieldOf(m, "failover-timeout"),
		ParallelSyncs:   fieldOf(m, "parallel-syncs"),
	}
	for _, q := range []struct {
		what string
		into *[]string
	}{{"replicas", &v.Replicas}, {"sentinels", &v.Sentinels}} {
		res, err := rdb.Do(ctx, "SENTINEL", q.what, group).Slice()
		if err != nil {
			return nil, fmt.Errorf("%s: SENTINEL %s: %w", n.Name, q.what, err)
		}
		for _, r := range res {
			*q.into = append(*q.into, fieldOf(r, "ip")+" "+fieldOf(r, "flags"))
		}
		slices.Sort(*q.into)
	}
	return v, nil
}
