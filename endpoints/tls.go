package endpoints

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
)

// TLS: when Endpoints.TLSCA is set, every node (Redis, Sentinel, resource)
// listens for TLS only, and a client that connects in plaintext gets
// nothing but a closed connection. The Dialer then does the handshake
// itself, so every client library that dials through it (go-redis, rueidis)
// speaks TLS without a TLS option of its own, and never falls back to
// plaintext: a CA that cannot be read fails every dial.

// TLSConfig is the client side of the nodes' TLS: their certificates are
// checked against TLSCA. Each connection's ServerName is the host of the
// logical address it dials ("redis-2"), which the node's certificate
// names; callers that dial a node otherwise set it themselves. Nil when
// the endpoints have no TLS.
func (e Endpoints) TLSConfig() (*tls.Config, error) {
	if e.TLSCA == "" {
		return nil, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(e.TLSCA)) {
		return nil, errors.New("bad endpoints: tls_ca holds no PEM certificate")
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}
