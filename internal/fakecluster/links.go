package fakecluster

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"

	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// links puts a toxiproxy proxy in this process between each client slot
// and each Redis node (Options.LinkFaults), as the container cluster does,
// so a link fault hits one client's view of one node.
type links struct {
	server *toxiproxy.ApiServer

	mu      sync.Mutex
	proxies map[linkKey]*toxiproxy.Proxy
	closed  bool
}

type linkKey struct {
	slot int
	node string
}

func newLinks() *links {
	return &links{server: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()), proxies: map[linkKey]*toxiproxy.Proxy{}}
}

// proxy is the running proxy of slot's link to n, started on first use.
func (l *links) proxy(slot int, n *Node) (*toxiproxy.Proxy, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, fmt.Errorf("the cluster's links are closed")
	}
	k := linkKey{slot, n.name}
	if p, ok := l.proxies[k]; ok {
		return p, nil
	}
	p := toxiproxy.NewProxy(l.server, fmt.Sprintf("client-%d-%s", slot, n.name), "127.0.0.1:0", n.Addr())
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("link from client %d to %s: %w", slot, n.name, err)
	}
	l.proxies[k] = p
	return p, nil
}

func (l *links) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for _, p := range l.proxies {
		p.Stop()
	}
}

// Link is client slot's link to the named Redis node; it fails on a
// cluster started without Options.LinkFaults.
func (c *Cluster) Link(slot int, node string) (nemesis.Link, error) {
	if c.links == nil {
		return nil, fmt.Errorf("link from client %d to %s: the fake cluster was started without link faults (Options.LinkFaults)", slot, node)
	}
	n, err := c.redisNode(node)
	if err != nil {
		return nil, err
	}
	p, err := c.links.proxy(slot, n)
	if err != nil {
		return nil, err
	}
	return &link{slot: slot, node: node, p: p}, nil
}

// link delays or cuts one proxy.
type link struct {
	slot int
	node string
	p    *toxiproxy.Proxy
}

// Delay holds every reply back by d; requests reach the node on time.
func (l *link) Delay(d time.Duration) error {
	return l.add(fmt.Sprintf(`{"name":"delay","type":"latency","stream":"downstream","attributes":{"latency":%d}}`, d.Milliseconds()))
}

// Cut drops everything both ways while connections stay open.
func (l *link) Cut() error {
	if err := l.add(`{"name":"cut-up","type":"timeout","stream":"upstream","attributes":{"timeout":0}}`); err != nil {
		return err
	}
	return l.add(`{"name":"cut-down","type":"timeout","stream":"downstream","attributes":{"timeout":0}}`)
}

// Heal removes the link's faults.
func (l *link) Heal(ctx context.Context) { l.p.Toxics.ResetToxics(ctx) }

func (l *link) add(toxic string) error {
	if _, err := l.p.Toxics.AddToxicJson(strings.NewReader(toxic)); err != nil {
		return fmt.Errorf("link from client %d to %s: %w", l.slot, l.node, err)
	}
	return nil
}
