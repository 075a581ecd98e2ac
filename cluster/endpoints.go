package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/redis/go-redis/v9"
)

// Endpoints is how a lock user reaches a run's nodes, without Docker: the
// master groups, the resource node and the published port of every logical
// address. It is plain data, so a client process receives it in its open
// request and builds its own connections.
type Endpoints struct {
	Topology string `json:"topology"`
	// MasterName and Sentinels name the Sentinel-managed group (sentinel).
	MasterName string   `json:"master_name,omitempty"`
	Sentinels  []string `json:"sentinels,omitempty"`
	// Masters are the independent masters, one lock group each.
	Masters []string `json:"masters,omitempty"`
	// Resource is the node holding the data the lock protects, if any.
	Resource string `json:"resource,omitempty"`
	// Addresses maps each logical address ("redis-2:6379", as Redis and
	// Sentinel report it) to its published port on 127.0.0.1.
	Addresses map[string]string `json:"addresses"`
}

// Endpoints snapshots the cluster's addresses. Published ports are pinned,
// so the snapshot stays right across kills and restarts.
func (c *Cluster) Endpoints() Endpoints {
	e := Endpoints{Topology: c.Spec.Topology, Addresses: map[string]string{}}
	for _, n := range c.Nodes {
		e.Addresses[n.Logical()] = n.Addr()
		switch {
		case n.Role == RoleSentinel:
			e.Sentinels = append(e.Sentinels, n.Logical())
		case n.Role == RoleResource:
			e.Resource = n.Logical()
		case n.Role == RoleRedis && c.Spec.Topology == Independent:
			e.Masters = append(e.Masters, n.Logical())
		}
	}
	if c.Spec.Topology == Sentinel {
		e.MasterName = MasterName
	}
	return e
}

// Groups is how many master groups a lock over these endpoints gets.
func (e Endpoints) Groups() int {
	if e.Topology == Sentinel {
		return 1
	}
	return len(e.Masters)
}

func (e Endpoints) book() *addressBook {
	b := &addressBook{}
	for l, p := range e.Addresses {
		b.set(l, p)
	}
	return b
}

// Clients opens one go-redis client per master group, as a separate lock
// user would: one failover client for the sentinel topology, one client per
// master for the independent one. The caller closes them.
func (e Endpoints) Clients(o ClientOptions) ([]*redis.Client, error) {
	b := e.book()
	switch e.Topology {
	case Sentinel:
		if len(e.Sentinels) == 0 {
			return nil, fmt.Errorf("sentinel endpoints without Sentinels")
		}
		if o.SentinelOnDial {
			return []*redis.Client{e.askOnDial(o, b)}, nil
		}
		fo := o.failover(e.MasterName, e.Sentinels)
		fo.Dialer = b.dial
		return []*redis.Client{redis.NewFailoverClient(fo)}, nil
	case Independent:
		if len(e.Masters) == 0 {
			return nil, fmt.Errorf("independent endpoints without masters")
		}
		var out []*redis.Client
		for _, m := range e.Masters {
			ro := o.redis()
			ro.Addr, ro.Dialer = m, b.dial
			out = append(out, redis.NewClient(ro))
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown topology %q", e.Topology)
}

// ResourceClient connects to the resource node.
func (e Endpoints) ResourceClient(o ClientOptions) (*redis.Client, error) {
	if e.Resource == "" {
		return nil, fmt.Errorf("this run has no resource node")
	}
	ro := o.redis()
	ro.Addr, ro.Dialer = e.Resource, e.book().dial
	return redis.NewClient(ro), nil
}

// askOnDial is a plain client whose every new connection goes to the
// master the first Sentinel that answers names (ClientOptions.SentinelOnDial).
// The Sentinel clients live as long as the process that opened them.
func (e Endpoints) askOnDial(o ClientOptions, b *addressBook) *redis.Client {
	var sentinels []*redis.SentinelClient
	for _, addr := range e.Sentinels {
		so := o.redis()
		so.Addr, so.Dialer = addr, b.dial
		sentinels = append(sentinels, redis.NewSentinelClient(so))
	}
	ro := o.redis()
	ro.Addr = "sentinel-master:" + e.MasterName // never dialled: the dialer asks
	ro.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var errs []error
		for _, s := range sentinels {
			addr, err := s.GetMasterAddrByName(ctx, e.MasterName).Result()
			if err == nil && len(addr) == 2 {
				return b.dial(ctx, network, net.JoinHostPort(addr[0], addr[1]))
			}
			errs = append(errs, err)
		}
		return nil, fmt.Errorf("no Sentinel named master %s: %w", e.MasterName, errors.Join(errs...))
	}
	return redis.NewClient(ro)
}
