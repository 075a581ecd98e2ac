package cluster

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"
)

// addressBook maps the logical addresses that Redis and Sentinel report
// ("redis-2:6379") to the ports published on 127.0.0.1, the only way the
// harness reaches a node.
type addressBook struct {
	mu    sync.RWMutex
	addrs map[string]string
}

func (b *addressBook) set(logical, physical string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.addrs == nil {
		b.addrs = map[string]string{}
	}
	b.addrs[logical] = physical
}

func (b *addressBook) lookup(logical string) (string, bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	p, ok := b.addrs[logical]
	return p, ok
}

// dial connects to a logical address through its published port. The
// connection reports the logical address as RemoteAddr: go-redis compares it
// with the master address Sentinel announces and would otherwise close every
// pooled connection on each master switch.
func (b *addressBook) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	physical, ok := b.lookup(addr)
	if !ok {
		return nil, fmt.Errorf("deadbolt: no published port for node address %q", addr)
	}
	d := net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}
	conn, err := d.DialContext(ctx, network, physical)
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
