package cluster

import (
	"crypto/x509"
	"encoding/pem"
	"testing"

	"github.com/stretchr/testify/require"
)

// The nodes' certificate names every node the spec starts (the names
// Sentinel and the cluster announce, which clients verify), localhost and
// 127.0.0.1, and no other node; it is signed by the run's CA, and each
// run draws a CA of its own.
func TestTheNodesCertificateNamesEveryNodeAndNoOther(t *testing.T) {
	for _, spec := range []Spec{
		{Topology: Sentinel, Resource: true},
		{Topology: Independent, Masters: 3},
		{Topology: RedisCluster},
	} {
		spec = spec.Defaults()
		cs, err := newCerts(spec.NodeNames())
		require.NoError(t, err)
		pool := x509.NewCertPool()
		require.True(t, pool.AppendCertsFromPEM(cs.ca))
		block, _ := pem.Decode(cs.cert)
		require.NotNil(t, block)
		cert, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		verify := func(name string) error {
			_, err := cert.Verify(x509.VerifyOptions{DNSName: name, Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
			return err
		}
		names := append(spec.NodeNames(), "localhost", "127.0.0.1")
		for _, n := range names {
			require.NoError(t, verify(n), "%s topology: %s", spec.Topology, n)
		}
		require.Error(t, verify("redis-99"), "a node the spec does not start")
		require.Error(t, verify("example.com"))

		other, err := newCerts(spec.NodeNames())
		require.NoError(t, err)
		otherPool := x509.NewCertPool()
		require.True(t, otherPool.AppendCertsFromPEM(other.ca))
		_, err = cert.Verify(x509.VerifyOptions{DNSName: names[0], Roots: otherPool})
		require.Error(t, err, "another run's CA must not vouch for this run's nodes")
	}
	require.Contains(t, (Spec{Topology: Sentinel, Resource: true}).Defaults().NodeNames(), "sentinel-3")
}

// Sentinel gets the TLS settings after its "port" line, since the last
// one wins: no plaintext port is left open.
func TestSentinelConfWithTLSClosesThePlaintextPort(t *testing.T) {
	conf := sentinelConf("sentinel-1", "redis-1", 2, 1e9, Secrets{}, true)
	require.Regexp(t, `(?s)port 26379\n.*port 0\ntls-port 26379\n.*tls-replication yes\n`, conf)
	require.NotContains(t, sentinelConf("sentinel-1", "redis-1", 2, 1e9, Secrets{}, false), "tls")
}
