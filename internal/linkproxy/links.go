// Package linkproxy puts one toxiproxy proxy, inside the harness's own
// process, between each client slot and each node of a lock service, so
// that a link fault hits one client's view of one node: client 1 can see
// nodes 1-3 while client 2 sees 3-5, and an acquire's reply can arrive
// after its TTL. The container cluster and the in-memory one share it.
// The proxies die with the harness.
package linkproxy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Set is the proxies of one cluster, each started on first use.
type Set struct {
	server *toxiproxy.ApiServer

	mu      sync.Mutex
	proxies map[key]*toxiproxy.Proxy
	closed  bool
}

type key struct {
	slot int
	node string
}

// New is an empty set of proxies.
func New() *Set {
	return &Set{server: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()), proxies: map[key]*toxiproxy.Proxy{}}
}

// Listen is where client slot reaches node (at addr) through its proxy,
// started on first use on 127.0.0.1.
func (s *Set) Listen(slot int, node, addr string) (string, error) {
	p, err := s.proxy(slot, node, addr)
	if err != nil {
		return "", err
	}
	return p.Listen, nil
}

func (s *Set) proxy(slot int, node, addr string) (*toxiproxy.Proxy, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("the cluster's links are closed")
	}
	k := key{slot, node}
	if p, ok := s.proxies[k]; ok {
		return p, nil
	}
	p := toxiproxy.NewProxy(s.server, fmt.Sprintf("client-%d-%s", slot, node), "127.0.0.1:0", addr)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("link from client %d to %s: %w", slot, node, err)
	}
	s.proxies[k] = p
	return p, nil
}

// Link is the link from client slot to node (at addr).
func (s *Set) Link(slot int, node, addr string) (*Link, error) {
	p, err := s.proxy(slot, node, addr)
	if err != nil {
		return nil, err
	}
	return &Link{Client: slot, Node: node, p: p}, nil
}

// HealAll removes every fault on every link.
func (s *Set) HealAll(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.proxies {
		p.Toxics.ResetToxics(ctx)
	}
}

// Close stops every proxy; no link starts after.
func (s *Set) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, p := range s.proxies {
		p.Stop()
	}
}

// Link is the path from one client slot to one node.
type Link struct {
	Client int
	Node   string
	p      *toxiproxy.Proxy
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
