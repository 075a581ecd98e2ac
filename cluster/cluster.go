// Package cluster runs Redis masters, replicas and Sentinels as containers
// through testcontainers-go, and gives the rest of deadbolt clients and fault
// hooks for them.
//
// Every node sits on two networks: "nodes", internal, for replication and
// Sentinel, where it is known by its name; and "clients", which carries the
// ports published on 127.0.0.1 that the harness uses. Isolating a node cuts
// only the first, so clients keep reaching it while its peers do not: the
// split brain that loses locks. Everything a run starts carries its run label
// and is removed by Close; Start first sweeps what dead runs left.
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/internal/linkproxy"
	"github.com/deadbolt-lab/deadbolt/topology"
)

// Topology names (package topology's), as Endpoints carry them.
const (
	Sentinel    = topology.Sentinel
	Independent = topology.Independent
	// RedisCluster is a Redis Cluster (cluster-enabled), named "cluster".
	RedisCluster = topology.Cluster
)

// MasterName is the Sentinel master group of the sentinel topology.
const MasterName = topology.MasterName

// Spec describes the nodes to start (topology.Spec: what a scenario
// file's "cluster" object holds).
type Spec = topology.Spec

// Cluster is one run's set of nodes.
type Cluster struct {
	Run   string
	Spec  Spec
	Nodes []*Node

	d      *docker
	dialer endpoints.Dialer
	// target is the deployment an attached cluster runs against (Attach);
	// nil for the clusters deadbolt starts.
	target *endpoints.Endpoints
	// secrets are the run's passwords (acl.go); zero for an attached
	// cluster, whose credentials are the target's.
	secrets   Secrets
	nodesNet  string
	hosts     *hosts
	clientNet string
	ports     map[int]bool
	links     *linkproxy.Set // nil without Spec.LinkFaults
	// primarySlot is Spec.PrimaryKey's hash slot (cluster topology).
	primarySlot int
	// logsSince is when a reused cluster's current run began (reset.go):
	// SaveLogs keeps only what came after. Zero: the whole log.
	logsSince time.Time
	// certs are the run's TLS certificates; nil without Spec.TLS.
	certs *certs
	// readers are the harness's clients of ReadKey (readkey.go).
	readersMu  sync.Mutex
	readers    map[string]*redis.Client
	oldReaders []*redis.Client // replaced readers, closed with the rest
}

// Start sweeps leftovers of dead runs, then starts the topology. On any
// error it removes what it started.
func Start(ctx context.Context, spec Spec) (_ *Cluster, err error) {
	spec = spec.Defaults()
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	d, err := newDocker(ctx)
	if err != nil {
		return nil, err
	}
	if err := d.sweep(ctx); err != nil {
		d.cli.Close()
		return nil, fmt.Errorf("sweep leftovers of dead runs: %w", err)
	}
	if err := d.checkImage(ctx, spec.Image); err != nil {
		d.cli.Close()
		return nil, err
	}
	secrets, err := NewSecrets()
	if err != nil {
		d.cli.Close()
		return nil, err
	}
	c := &Cluster{Run: newRunID(), Spec: spec, d: d, ports: map[int]bool{}, secrets: secrets}
	if spec.LinkFaults {
		c.links = linkproxy.New()
	}
	if spec.TLS {
		if err := c.useTLS(); err != nil {
			d.cli.Close()
			return nil, err
		}
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Close(context.WithoutCancel(ctx)))
		}
	}()
	if err = c.nodesNetwork(ctx); err != nil {
		return nil, err
	}
	if c.clientNet, err = c.network(ctx, "clients", false); err != nil {
		return nil, err
	}
	switch spec.Topology {
	case Sentinel:
		err = c.startSentinel(ctx)
	case Independent:
		err = c.startIndependent(ctx)
	case RedisCluster:
		err = c.startRedisCluster(ctx)
	}
	if err == nil && spec.Resource {
		_, err = c.startNode(ctx, ResourceName, RoleResource, 6379, append(redisArgs(ResourceName), c.secrets.RedisArgs()...), nil)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Close removes every container and network of the run. It is safe to call
// more than once and with a cancelled parent context (use WithoutCancel).
func (c *Cluster) Close(ctx context.Context) error {
	c.closeReaders()
	if c.target != nil {
		return c.closeAttached(ctx)
	}
	if c.d == nil {
		return nil
	}
	if c.links != nil {
		c.links.Close()
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err := c.d.removeRun(ctx, c.Run)
	if err == nil {
		c.d.cli.Close()
		c.d = nil
	}
	return err
}

func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "deadbolt-" + time.Now().UTC().Format("20060102t150405") + "-" + hex.EncodeToString(b)
}

func (c *Cluster) networkLabels() map[string]string {
	labels := runLabels(c.Run)
	for k, v := range testcontainers.GenericLabels() {
		labels[k] = v
	}
	return labels
}

func (c *Cluster) network(ctx context.Context, name string, internal bool) (string, error) {
	full := c.Run + "-" + name
	r, err := c.d.cli.NetworkCreate(ctx, full, client.NetworkCreateOptions{Driver: "bridge", Internal: internal, Labels: c.networkLabels()})
	if err != nil {
		return "", fmt.Errorf("create network %s: %w", full, err)
	}
	return r.ID, nil
}

// startNode creates and starts one container on both networks, with its
// port pinned on 127.0.0.1 and files (such as sentinel.conf) copied in.
func (c *Cluster) startNode(ctx context.Context, name string, role Role, port int, cmd []string, files []testcontainers.ContainerFile) (*Node, error) {
	var env map[string]string
	if c.certs != nil {
		files = append(slices.Clip(files), c.certs.files()...)
		if role != RoleSentinel { // a Sentinel's are in its sentinel.conf
			cmd = append(slices.Clip(cmd), tlsArgs(port, c.Spec.Topology == RedisCluster && role == RoleRedis)...)
		}
	}
	if c.Spec.ClockFaults && role == RoleRedis {
		env = clockShiftEnv()
		files = append(slices.Clip(files), testcontainers.ContainerFile{
			Reader: strings.NewReader(clockShiftOffset(0)), ContainerFilePath: clockShiftFile, FileMode: 0o644})
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		hostPort, err := c.pickPort()
		if err != nil {
			return nil, err
		}
		n := &Node{Name: name, Role: role, Port: port, HostPort: hostPort, cl: c}
		c.dialer.Set(n.Logical(), n.Addr())
		cport := network.MustParsePort(fmt.Sprintf("%d/tcp", port))
		req := testcontainers.ContainerRequest{
			Env:          env,
			Image:        c.Spec.Image,
			Name:         c.Run + "-" + name,
			Entrypoint:   []string{"/usr/bin/redis-" + map[Role]string{RoleRedis: "server", RoleSentinel: "sentinel", RoleResource: "server"}[role]},
			Cmd:          cmd,
			Labels:       runLabels(c.Run),
			ExposedPorts: []string{cport.String()},
			// The nodes network joins at creation, with a fixed address
			// (pinAddress), rather than after it by testcontainers.
			Networks:   []string{c.clientNet},
			Files:      files,
			WaitingFor: pingReady{node: n, timeout: 30 * time.Second},
			HostConfigModifier: func(hc *container.HostConfig) {
				hc.PortBindings = network.PortMap{cport: {{HostIP: netip.MustParseAddr(loopback), HostPort: fmt.Sprint(hostPort)}}}
				// Names resolve from /etc/hosts (see hosts.go); a question that
				// still reaches DNS gives up after 1 s, not glibc's 5.
				hc.ExtraHosts = c.hosts.extraHosts()
				hc.DNSOptions = []string{"timeout:1", "attempts:1"}
			},
		}
		ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
			ContainerRequest: req, Started: false, Logger: tclog.NewNoopLogger(),
		})
		if ctr != nil {
			n.c = ctr.(*testcontainers.DockerContainer)
			// Join the nodes network at its fixed address, then start.
			if err = n.reconnect(ctx); err == nil {
				err = n.c.Start(ctx)
			}
		}
		if err == nil {
			c.Nodes = append(c.Nodes, n)
			return n, nil
		}
		lastErr = fmt.Errorf("start %s: %w", name, err)
		if !strings.Contains(err.Error(), "address already in use") && !strings.Contains(err.Error(), "port is already allocated") {
			break
		}
		// Another process took the port between the pick and the bind.
		if n.c != nil {
			_ = n.c.Terminate(context.WithoutCancel(ctx))
		}
	}
	return nil, lastErr
}

func (c *Cluster) pickPort() (int, error) {
	for i := 0; i < 20; i++ {
		p, err := freePort()
		if err != nil {
			return 0, fmt.Errorf("pick a port on 127.0.0.1: %w", err)
		}
		if !c.ports[p] {
			c.ports[p] = true
			return p, nil
		}
	}
	return 0, errors.New("no free port on 127.0.0.1")
}

// Node returns the node with this name.
func (c *Cluster) Node(name string) (*Node, error) {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no node %q in run %s", name, c.Run)
}

// ByRole lists the nodes of one role, in start order.
func (c *Cluster) ByRole(r Role) []*Node {
	var out []*Node
	for _, n := range c.Nodes {
		if n.Role == r {
			out = append(out, n)
		}
	}
	return out
}

// Clients opens one go-redis client per master group (see
// Endpoints.Clients), with the harness's credentials (Admin): the
// harness's own view of the lock service, for tests. The caller closes
// them.
func (c *Cluster) Clients(o endpoints.ClientOptions) []redis.UniversalClient {
	e := c.Endpoints()
	if c.target == nil {
		e.Username, e.Password = c.Admin()
		e.SentinelUsername, e.SentinelPassword = e.Username, e.Password
	}
	clients, err := e.Clients(o)
	if err != nil {
		panic("cluster: a started cluster has no lock endpoints: " + err.Error())
	}
	return clients
}

// SaveLogs writes every node's log into dir.
func (c *Cluster) SaveLogs(ctx context.Context, dir string) error {
	if c.target != nil {
		return nil // the deployment's logs are its owner's
	}
	var errs []error
	for _, n := range c.Nodes {
		errs = append(errs, n.SaveLog(ctx, dir))
	}
	return errors.Join(errs...)
}

const loopback = "127.0.0.1"
