package endpoints

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// ClientOptions are the go-redis settings of every client deadbolt builds.
// A paused or cut-off node hangs rather than refuses, so every call is
// bounded, and go-redis must not retry: a retried SET NX whose first attempt
// took effect would come back "key exists" and be recorded as a failed
// acquire.
type ClientOptions struct {
	DialTimeout  time.Duration
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	PoolSize     int
	// SentinelOnDial makes a Sentinel topology's client ask the Sentinels
	// for the master only when it dials a connection, as redis-py and many
	// other libraries do, instead of following Sentinel's +switch-master
	// as go-redis's failover client does. Pooled connections stay on the
	// old master until it drops them or answers READONLY (go-redis then
	// closes the connection), so such a client meets a failover only when
	// the old master is demoted.
	SentinelOnDial bool
	// SlotRefresh is how often a cluster client re-reads the slot map
	// without being told to by a MOVED or READONLY reply; 0 keeps the
	// library's own (go-redis: 60 s). A client that meets CLUSTERDOWN on a
	// cut-off master learns of its replica's promotion only so.
	SlotRefresh time.Duration
}

// DefaultClientOptions keeps timeouts far below any lease time a scenario uses.
func DefaultClientOptions() ClientOptions {
	return ClientOptions{
		DialTimeout:  500 * time.Millisecond,
		ReadTimeout:  500 * time.Millisecond,
		WriteTimeout: 500 * time.Millisecond,
		PoolSize:     4,
	}
}

// PatientClientOptions are DefaultClientOptions with timeouts of seconds,
// for the harness's own calls that nothing times and that cannot be
// retried (forming a cluster, a fault's command, setting up and reading
// the resource outside any lock): on a loaded machine a reply can take
// longer than the half second a probe waits.
func PatientClientOptions() ClientOptions {
	o := DefaultClientOptions()
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = patientTimeout, patientTimeout, patientTimeout
	return o
}

const patientTimeout = 5 * time.Second

// WithDefaults fills the unset fields from DefaultClientOptions and raises
// the timeouts to at least call, a lock's own bound on a Redis call:
// go-redis cuts each read and write at the shorter of its timeout and the
// call's context, so a longer call timeout would be cut short.
func (o ClientOptions) WithDefaults(call time.Duration) ClientOptions {
	d := DefaultClientOptions()
	fill := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = max(def, call)
		}
	}
	fill(&o.DialTimeout, d.DialTimeout)
	fill(&o.ReadTimeout, d.ReadTimeout)
	fill(&o.WriteTimeout, d.WriteTimeout)
	if o.PoolSize == 0 {
		o.PoolSize = d.PoolSize
	}
	return o
}

func (o ClientOptions) redis() *redis.Options {
	return &redis.Options{
		DialTimeout:  o.DialTimeout,
		ReadTimeout:  o.ReadTimeout,
		WriteTimeout: o.WriteTimeout,
		PoolSize:     o.PoolSize,
		MaxRetries:   -1,
		// One dial, not five with backoff: a refused connection is then a
		// prompt failure (nothing sent), not a timeout recorded as info.
		DialerRetries: 1,
		// Without this go-redis ignores context deadlines during I/O, and a
		// lock's per-call timeout would not bound anything.
		ContextTimeoutEnabled: true,
		// Maintenance notifications (a Redis Enterprise feature) make
		// NewClient resolve the address's host name (up to 2 s) and add a
		// command to each connection's handshake: I/O where none belongs.
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
}

// Client is a go-redis client of the one node at the logical address addr,
// without credentials (the harness's own view of a node).
func (d *Dialer) Client(addr string, o ClientOptions) *redis.Client {
	ro := o.redis()
	ro.Addr, ro.Dialer = addr, d.Dial
	return redis.NewClient(ro)
}

// AuthClient is Client with credentials, for a deployment whose Redis
// nodes ask for them.
func (d *Dialer) AuthClient(addr string, o ClientOptions, username, password string) *redis.Client {
	ro := o.redis()
	ro.Addr, ro.Dialer = addr, d.Dial
	ro.Username, ro.Password = username, password
	return redis.NewClient(ro)
}

// node is the options of a lock user's client of one Redis node (not a
// Sentinel).
func (e Endpoints) node(o ClientOptions, addr string, d *Dialer) *redis.Options {
	ro := o.redis()
	ro.Addr, ro.Dialer = addr, d.Dial
	ro.Username, ro.Password = e.Username, e.Password
	return ro
}

// Clients opens one go-redis client per master group, as a separate lock
// user would: one failover client for the sentinel topology (or, with
// SentinelOnDial, a client that asks the Sentinels on each dial), one
// cluster client for the cluster topology, one client per master for the
// independent one. Nothing is dialled before the first command. The caller
// closes them.
func (e Endpoints) Clients(o ClientOptions) ([]redis.UniversalClient, error) {
	if err := e.Check(); err != nil {
		return nil, err
	}
	d := e.Dialer()
	switch e.Topology {
	case Cluster:
		return []redis.UniversalClient{e.clusterClient(o, d)}, nil
	case Sentinel:
		if o.SentinelOnDial {
			return []redis.UniversalClient{e.askOnDial(o, d)}, nil
		}
		return []redis.UniversalClient{redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName:            e.MasterName,
			SentinelAddrs:         e.Sentinels,
			Dialer:                d.Dial,
			Username:              e.Username,
			Password:              e.Password,
			SentinelUsername:      e.SentinelUsername,
			SentinelPassword:      e.SentinelPassword,
			DialTimeout:           o.DialTimeout,
			ReadTimeout:           o.ReadTimeout,
			WriteTimeout:          o.WriteTimeout,
			PoolSize:              o.PoolSize,
			MaxRetries:            -1,
			DialerRetries:         1, // as every other client (ClientOptions.redis)
			ContextTimeoutEnabled: true,
		})}, nil
	}
	var out []redis.UniversalClient
	for _, m := range e.Masters {
		out = append(out, redis.NewClient(e.node(o, m, d)))
	}
	return out, nil
}

// ResourceClient connects to the resource node.
func (e Endpoints) ResourceClient(o ClientOptions) (*redis.Client, error) {
	if e.Resource == "" {
		return nil, fmt.Errorf("this run has no resource node")
	}
	if _, ok := e.Addresses[e.Resource]; !ok {
		return nil, fmt.Errorf("bad endpoints: node %s has no entry in addresses", e.Resource)
	}
	return redis.NewClient(e.node(o, e.Resource, e.Dialer())), nil
}

// askOnDial is a plain client whose every new connection goes to the
// master the first Sentinel that answers names (ClientOptions.SentinelOnDial).
// The Sentinel clients live as long as the process that opened them.
func (e Endpoints) askOnDial(o ClientOptions, d *Dialer) *redis.Client {
	var sentinels []*redis.SentinelClient
	for _, addr := range e.Sentinels {
		so := o.redis()
		so.Addr, so.Dialer = addr, d.Dial
		so.Username, so.Password = e.SentinelUsername, e.SentinelPassword
		sentinels = append(sentinels, redis.NewSentinelClient(so))
	}
	ro := e.node(o, "sentinel-master:"+e.MasterName, d) // never dialled: the dialer asks
	ro.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var errs []error
		for _, s := range sentinels {
			addr, err := s.GetMasterAddrByName(ctx, e.MasterName).Result()
			if err == nil && len(addr) == 2 {
				return d.Dial(ctx, network, net.JoinHostPort(addr[0], addr[1]))
			}
			errs = append(errs, err)
		}
		return nil, fmt.Errorf("no Sentinel named master %s: %w", e.MasterName, errors.Join(errs...))
	}
	return redis.NewClient(ro)
}
