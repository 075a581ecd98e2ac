package endpoints

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"
)

// Dialer connects to logical addresses ("redis-2:6379", as Redis and
// Sentinel report them) through their published ports on 127.0.0.1. Any
// client library can use it: go-redis as its Dialer, rueidis as its
// DialCtxFn, for Sentinel and master connections alike.
type Dialer struct {
	mu    sync.RWMutex
	addrs map[string]string
}

// Dialer maps e's addresses. The caller may Set more later.
func (e Endpoints) Dialer() *Dialer {
	d := &Dialer{}
	for logical, published := range e.Addresses {
		d.Set(logical, published)
	}
	return d
}

// Set maps one logical address to its published one.
func (d *Dialer) Set(logical, published string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.addrs == nil {
		d.addrs = map[string]string{}
	}
	d.addrs[logical] = published
}

// Published is the address a logical one is reached at.
func (d *Dialer) Published(logical string) (string, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	p, ok := d.addrs[logical]
	return p, ok
}

// Dial connects to a logical address through its published port, within
// ctx. The connection reports the logical address as RemoteAddr: go-redis
// compares it with the master address Sentinel announces, and would
// otherwise close every pooled connection on each master switch.
func (d *Dialer) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	published, ok := d.Published(addr)
	if !ok {
		return nil, fmt.Errorf("deadbolt: no published port for node address %q", addr)
	}
	nd := net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}
	conn, err := nd.DialContext(ctx, network, published)
	if err != nil {
		return nil, err
	}
	return &logicalConn{Conn: conn, remote: logicalAddr{network: network, addr: addr}}, nil
}

type logicalConn struct {
	net.Conn
	remote net.Addr
}

func (c *logicalConn) RemoteAddr() net.Addr { return c.remote }

type logicalAddr struct{ network, addr string }

func (a logicalAddr) Network() string { return a.network }
func (a logicalAddr) String() string  { return a.addr }
