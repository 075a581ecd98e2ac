package endpoints

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"time"
)

// Dialer connects to logical addresses ("redis-2:6379", as Redis and
// Sentinel report them) through their published ports on 127.0.0.1. Any
// client library can use it: go-redis as its Dialer, rueidis as its
// DialCtxFn, for Sentinel and master connections alike. With TLS set it
// also does the TLS handshake (tls.go).
type Dialer struct {
	mu    sync.RWMutex
	addrs map[string]string
	tls   *tls.Config
	// tlsErr is why the endpoints' TLS could not be set up: every dial
	// fails with it rather than connect in plaintext.
	tlsErr error
}

// Dialer maps e's addresses, and speaks TLS when e has a CA. The caller
// may Set more later.
func (e Endpoints) Dialer() *Dialer {
	d := &Dialer{}
	for logical, published := range e.Addresses {
		d.Set(logical, published)
	}
	d.tls, d.tlsErr = e.TLSConfig()
	return d
}

// SetTLS makes every later dial a TLS client of the nodes, verified by
// cfg (see Endpoints.TLSConfig); nil is plaintext.
func (d *Dialer) SetTLS(cfg *tls.Config) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.tls, d.tlsErr = cfg, nil
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
// otherwise close every pooled connection on each master switch. With TLS,
// the handshake is part of the dial and within the same bound: a paused
// node hangs in it as in any other read.
func (d *Dialer) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	published, ok := d.Published(addr)
	if !ok {
		return nil, fmt.Errorf("deadbolt: no published port for node address %q", addr)
	}
	d.mu.RLock()
	cfg, tlsErr := d.tls, d.tlsErr
	d.mu.RUnlock()
	if tlsErr != nil {
		return nil, tlsErr
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	nd := net.Dialer{KeepAlive: 30 * time.Second}
	conn, err := nd.DialContext(ctx, network, published)
	if err != nil {
		return nil, err
	}
	var lc net.Conn = &logicalConn{Conn: conn, remote: logicalAddr{network: network, addr: addr}}
	if cfg == nil {
		return lc, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("deadbolt: node address %q is not host:port", addr)
	}
	cfg = cfg.Clone()
	cfg.ServerName = host
	tc := tls.Client(lc, cfg) // its RemoteAddr is lc's, the logical one
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
	}
	return tc, nil
}

// dialTimeout bounds a dial, TLS handshake included, whatever the caller's
// context allows.
const dialTimeout = 2 * time.Second

type logicalConn struct {
	net.Conn
	remote net.Addr
}

func (c *logicalConn) RemoteAddr() net.Addr { return c.remote }

type logicalAddr struct{ network, addr string }

func (a logicalAddr) Network() string { return a.network }
func (a logicalAddr) String() string  { return a.addr }
