package cluster

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"

	"github.com/testcontainers/testcontainers-go"

	"github.com/deadbolt-lab/deadbolt/endpoints"
)

// TLS (Spec.TLS): every node deadbolt starts (Redis, Sentinel, the
// resource) listens for TLS only, on its usual port (--port 0), and speaks
// TLS to its peers: replication (tls-replication), the cluster bus
// (tls-cluster), Sentinel to the nodes and to other Sentinels (Sentinel's
// tls-replication covers every link it opens). The certificates are drawn
// per run, in Go: a CA, and one server certificate for every node, whose
// names are each node's hostname (what Sentinel and the cluster announce
// and what the Dialer checks), plus localhost and 127.0.0.1 (the published
// ports, for a client that dials those directly). Clients get the CA in
// Endpoints.TLSCA.
//
// Clients present no certificate (tls-auth-clients no): every party
// already authenticates as its own ACL user with a per-run password
// (acl.go), so a client certificate would prove nothing more, and each
// driver would need a key file to load. The nodes' own links do present
// the server certificate, which Redis uses as its client certificate too.

// Where the certificates live in a container.
const (
	tlsCAFile   = "/tls/ca.crt"
	tlsCertFile = "/tls/server.crt"
	tlsKeyFile  = "/tls/server.key"
)

// certs are one run's TLS material, PEM-encoded.
type certs struct {
	ca, cert, key []byte
}

// certValidity is wide on purpose: a clock fault moves a node's wall clock,
// and a peer checking a certificate with it must not find it expired.
const certValidity = 365 * 24 * time.Hour

// newCerts draws a CA and a server certificate for hosts (hostnames),
// localhost and 127.0.0.1.
func newCerts(hosts []string) (certs, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return certs{}, err
	}
	ca := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "deadbolt run CA"},
		NotBefore:             now.Add(-certValidity),
		NotAfter:              now.Add(certValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return certs{}, fmt.Errorf("sign the run's CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return certs{}, err
	}
	server := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "deadbolt node"},
		NotBefore:    now.Add(-certValidity),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		// Nodes use it both ways: as servers, and as clients of their
		// master, their cluster peers and (Sentinel) the monitored nodes.
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    append(append([]string{}, hosts...), "localhost"),
		IPAddresses: []net.IP{net.ParseIP(loopback)},
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return certs{}, err
	}
	der, err := x509.CreateCertificate(rand.Reader, server, caCert, &key.PublicKey, caKey)
	if err != nil {
		return certs{}, fmt.Errorf("sign the nodes' certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return certs{}, err
	}
	return certs{
		ca:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// files are the certificates as the containers get them.
func (c certs) files() []testcontainers.ContainerFile {
	var out []testcontainers.ContainerFile
	for path, b := range map[string][]byte{tlsCAFile: c.ca, tlsCertFile: c.cert, tlsKeyFile: c.key} {
		out = append(out, testcontainers.ContainerFile{Reader: bytes.NewReader(b), ContainerFilePath: path, FileMode: 0o600})
	}
	return out
}

// tlsConfig is the harness's client side of the run's TLS.
func (c certs) tlsConfig() (*tls.Config, error) {
	return endpoints.Endpoints{TLSCA: string(c.ca)}.TLSConfig()
}

// tlsSettings are the TLS settings of every node: a Redis node's as
// arguments ("--" + each), a Sentinel's as configuration lines. The port
// stays the node's usual one, now for TLS only.
func tlsSettings(port int, cluster bool) [][2]string {
	s := [][2]string{
		{"port", "0"},
		{"tls-port", fmt.Sprint(port)},
		{"tls-cert-file", tlsCertFile},
		{"tls-key-file", tlsKeyFile},
		{"tls-ca-cert-file", tlsCAFile},
		{"tls-auth-clients", "no"},
		{"tls-replication", "yes"},
	}
	if cluster {
		s = append(s, [2]string{"tls-cluster", "yes"})
	}
	return s
}

// tlsArgs are tlsSettings on a redis-server command line; later arguments
// win, so they replace redisArgs's --port.
func tlsArgs(port int, cluster bool) []string {
	var args []string
	for _, kv := range tlsSettings(port, cluster) {
		args = append(args, "--"+kv[0], kv[1])
	}
	return args
}

// tlsConf are tlsSettings as sentinel.conf lines.
func tlsConf(port int) []string {
	var lines []string
	for _, kv := range tlsSettings(port, false) {
		lines = append(lines, kv[0]+" "+kv[1])
	}
	return lines
}

// useTLS draws the run's certificates and makes the harness's own dials
// TLS clients of them.
func (c *Cluster) useTLS() error {
	cs, err := newCerts(c.Spec.NodeNames())
	if err != nil {
		return fmt.Errorf("TLS certificates: %w", err)
	}
	cfg, err := cs.tlsConfig()
	if err != nil {
		return err
	}
	c.certs = &cs
	c.dialer.SetTLS(cfg)
	return nil
}
