package cluster

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"

	"github.com/deadbolt-lab/deadbolt/endpoints"
)

// links puts one toxiproxy proxy, inside the harness's own process, between
// each client slot and each lock-service node (Redis and Sentinel), for a
// cluster started with Spec.LinkFaults. A link fault then hits one client's
// view of one node: client 1 can see nodes 1-3 while client 2 sees 3-5, and
// an acquire's reply can arrive after its TTL. The resource node is reached
// directly: it is never faulted. The proxies die with the harness.
type links struct {
	server *toxiproxy.ApiServer

	mu      sync.Mutex
	proxies map[linkKey]*toxiproxy.Proxy
	closed  bool
}

type linkKey struct {
	client int
	node   string
}

func newLinks() *links {
	return &links{
		server:  toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		proxies: map[linkKey]*toxiproxy.Proxy{},
	}
}

// proxy returns the running proxy for one link, starting it on first use.
func (l *links) proxy(client int, n *Node) (*toxiproxy.Proxy, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, fmt.Errorf("the cluster's links are closed")
	}
	k := linkKey{client, n.Name}
	if p, ok := l.proxies[k]; ok {
		return p, nil
	}
	p := toxiproxy.NewProxy(l.server, fmt.Sprintf("client-%d-%s", client, n.Name), loopback+":0", n.Addr())
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("link from client %d to %s: %w", client, n.Name, err)
	}
	l.proxies[k] = p
	return p, nil
}

func (l *links) healAll(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.proxies {
		p.Toxics.ResetToxics(ctx)
	}
}

func (l *links) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for _, p := range l.proxies {
		p.Stop()
	}
}

// faultable reports the nodes a link fault may sit in front of.
func faultable(n *Node) bool { return n.Role == RoleRedis || n.Role == RoleSentinel }

// EndpointsFor is how client slot client reaches the nodes: through its own
// links when the cluster has link faults, else as Endpoints.
func (c *Cluster) EndpointsFor(client int) (endpoints.Endpoints, error) {
	e := c.Endpoints()
	if c.links == nil {
		return e, nil
	}
	for _, n := range c.Nodes {
		if !faultable(n) {
			continue
		}
		p, err := c.links.proxy(client, n)
		if err != nil {
			return endpoints.Endpoints{}, err
		}
		e.Addresses[n.Logical()] = p.Listen
	}
	return e, nil
}

// Link is the path from one client slot to one node.
type Link struct {
	Client int
	Node   string
	p      *toxiproxy.Proxy
}

// Link returns the link from client slot client to the named node.
func (c *Cluster) Link(client int, node string) (*Link, error) {
	if c.links == nil {
		return nil, fmt.Errorf("link from client %d to %s: the cluster was started without link faults (Spec.LinkFaults)", client, node)
	}
	n, err := c.Node(node)
	if err != nil {
		return nil, err
	}
	if !faultable(n) {
		return nil, fmt.Errorf("link from client %d to %s: the %s node is never faulted", client, node, n.Role)
	}
	p, err := c.links.proxy(client, n)
	if err != nil {
		return nil, err
	}
	return &Link{Client: client, Node: node, p: p}, nil
}

// Delay holds every reply from the node to the client back by d; requests
// go through at once, so the node acts on them on time and the client
// learns of it late.
func (l *Link) Delay(d time.Duration) error {
	return l.add(fmt.Sprintf(`{"name":"delay","type":"latency","stream":"downstream","attributes":{"latency":%d}}`, d.Milliseconds()))
}

// Cut drops everything on the link both ways while connections stay open,
// as a network partition does: neither side hears a reset.
func (l *Link) Cut() error {
	if err := l.add(`{"name":"cut-up","type":"timeout","stream":"upstream","attributes":{"timeout":0}}`); err != nil {
		return err
	}
	return l.add(`{"name":"cut-down","type":"timeout","stream":"downstream","attributes":{"timeout":0}}`)
}

// Heal removes every fault on the link. Connections that were cut are
// closed, as a client's timeouts would have closed them.
func (l *Link) Heal(ctx context.Context) {
	l.p.Toxics.ResetToxics(ctx)
}

// Faults names the faults on the link now.
func (l *Link) Faults() []string {
	var out []string
	for _, name := range []string{"cut-down", "cut-up", "delay"} {
		if l.p.Toxics.GetToxic(name) != nil {
			out = append(out, name)
		}
	}
	return out
}

func (l *Link) add(toxic string) error {
	if _, err := l.p.Toxics.AddToxicJson(strings.NewReader(toxic)); err != nil {
		return fmt.Errorf("link from client %d to %s: %w", l.Client, l.Node, err)
	}
	return nil
}
