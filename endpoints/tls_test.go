package endpoints_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/endpoints"
)

// selfSigned is a certificate for name, its own CA, as PEM and as the
// server's tls.Certificate.
func selfSigned(t *testing.T, name string) (string, tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{name}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// With tls_ca the Dialer does the handshake, checking the certificate
// against the logical host (not 127.0.0.1), and the connection still says
// it is the logical address. A certificate for another name, another CA
// or a tls_ca that is no certificate fails the dial: never plaintext.
func TestTheDialerSpeaksTLSCheckedAgainstTheLogicalHost(t *testing.T) {
	ca, cert := selfSigned(t, "redis-2")
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { // answer the handshake, then hang up
				_ = c.(*tls.Conn).Handshake()
				c.Close()
			}()
		}
	}()
	addrs := map[string]string{"redis-2:6379": ln.Addr().String(), "redis-3:6379": ln.Addr().String()}
	e := endpoints.Endpoints{Topology: endpoints.Independent, Masters: []string{"redis-2:6379"}, Addresses: addrs, TLSCA: ca}
	require.NoError(t, e.Check())
	ctx := context.Background()
	conn, err := e.Dialer().Dial(ctx, "tcp", "redis-2:6379")
	require.NoError(t, err)
	require.IsType(t, &tls.Conn{}, conn)
	require.Equal(t, "redis-2:6379", conn.RemoteAddr().String())
	conn.Close()

	_, err = e.Dialer().Dial(ctx, "tcp", "redis-3:6379")
	require.ErrorContains(t, err, "certificate is valid for redis-2, not redis-3")
	other, _ := selfSigned(t, "redis-2")
	e.TLSCA = other
	_, err = e.Dialer().Dial(ctx, "tcp", "redis-2:6379")
	require.ErrorContains(t, err, "certificate signed by unknown authority")
	e.TLSCA = "not a certificate"
	require.ErrorContains(t, e.Check(), "tls_ca holds no PEM certificate")
	_, err = e.Dialer().Dial(ctx, "tcp", "redis-2:6379")
	require.ErrorContains(t, err, "tls_ca holds no PEM certificate")
}

// A node that accepts and never answers (paused) fails the handshake
// within the dial's bound.
func TestATLSHandshakeWithAHungNodeIsBounded(t *testing.T) {
	ca, _ := selfSigned(t, "redis-2")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	e := endpoints.Endpoints{Addresses: map[string]string{"redis-2:6379": ln.Addr().String()}, TLSCA: ca}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = e.Dialer().Dial(ctx, "tcp", "redis-2:6379")
	require.ErrorContains(t, err, "TLS handshake with redis-2:6379")
	require.Less(t, time.Since(start), 2*time.Second)
}
