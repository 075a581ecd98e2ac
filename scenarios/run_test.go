package scenarios_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/drivers"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

func TestMain(m *testing.M) { clienttest.Main(m) }

func TestEveryScenarioIsRunnableAsRegistered(t *testing.T) {
	require.NotEmpty(t, scenarios.CISuite())
	for _, name := range scenarios.Names() {
		s, err := scenarios.Get(name)
		require.NoError(t, err)
		if s.Driver != "" {
			shippedDriverRuns(t, s.Driver)
		}
		_, err = s.Prepare(scenarios.RunOptions{})
		require.NoError(t, err, name)
	}
}

// shippedDriverRuns skips the test when the named driver's interpreter
// cannot start it (python3-redis missing), except under CI=true.
func shippedDriverRuns(t *testing.T, name string) {
	t.Helper()
	d, err := drivers.Get(name)
	require.NoError(t, err)
	cmd, err := d.Command()
	require.NoError(t, err)
	if _, err := client.Probe(cmd); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("driver %s (needs %s) does not start, and under CI=true it must: %v", name, d.Needs, err)
		}
		t.Skipf("driver %s does not start (it needs %s; CI=true makes this a failure): %v", name, d.Needs, err)
	}
}

// A scenario with its own driver runs its clients with it: Prepare reads
// its hello (its lock is the driver's, not deadbolt's), and --driver
// replaces it.
func TestAScenarioRunsItsOwnDriver(t *testing.T) {
	s, err := scenarios.Get("pause-redispy")
	require.NoError(t, err)
	shippedDriverRuns(t, s.Driver)
	_, err = s.Prepare(scenarios.RunOptions{})
	require.NoError(t, err)
	_, err = s.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetLock("simple")}})
	require.ErrorContains(t, err, `unknown lock "simple": driver /usr/bin/python3 `)
	_, err = s.Prepare(scenarios.RunOptions{Driver: clienttest.Command()})
	require.ErrorContains(t, err, `unknown lock "redispy"`, "--driver replaces the scenario's driver")
}

func TestBadRunOptionsAreRejectedBeforeAnyContainer(t *testing.T) {
	s, err := scenarios.Get("failover-simple")
	require.NoError(t, err)
	_, err = s.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetLock("no-such-lock")}})
	require.ErrorContains(t, err, `unknown lock "no-such-lock"`)
	_, err = s.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetTime(time.Second)}})
	require.ErrorContains(t, err, "needs --time of at least")
	_, err = s.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetClients(-1)}})
	require.ErrorContains(t, err, "--clients must be at least 1")
	_, err = s.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetLock("redlock")}})
	require.NoError(t, err, "a quorum lock runs on one master group too")
	r, err := scenarios.Get("failover-redlock")
	require.NoError(t, err)
	_, err = r.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetLock("simple")}})
	require.ErrorContains(t, err, "lock simple cannot run in scenario failover-redlock")
	_, err = s.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetWorkload("nope")}})
	require.ErrorContains(t, err, `unknown workload "nope"`)
	p, err := scenarios.Get("pause-get-then-del")
	require.NoError(t, err)
	_, err = p.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetLock("simple")}})
	require.ErrorContains(t, err, `lock simple has no point "after-get"`)
	p, err = scenarios.Get("pause-simple")
	require.NoError(t, err)
	_, err = p.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetWorkload("mutex")}})
	require.ErrorContains(t, err, "waits for a resource read")
	_, err = p.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetExpect("fine")}})
	require.ErrorContains(t, err, `unknown expectation "fine"`)
	mine, err := s.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetLock("redlock"), scenarios.SetExpect(scenarios.Safe)}})
	require.NoError(t, err)
	require.Equal(t, scenarios.Safe, mine.Expect, "the caller's expectation replaces the scenario's")

	_, err = scenarios.Get("nope")
	require.ErrorContains(t, err, `unknown scenario "nope"`)
}

// TLS: the option turns it on for any scenario's topology, a lock that
// does not declare it is refused, and a --target names its own TLS by its
// CA; all before any container starts.
func TestTLSIsCheckedBeforeAnyContainer(t *testing.T) {
	s, err := scenarios.Get("crash-simple")
	require.NoError(t, err)
	require.False(t, s.Cluster.TLS)
	p, err := s.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.WithTLS()}})
	require.NoError(t, err)
	require.True(t, p.Cluster.TLS)
	tlsScenario, err := scenarios.Get("failover-simple-tls")
	require.NoError(t, err)
	require.True(t, tlsScenario.Cluster.TLS)

	noTLS := locks.Declared{Driver: "old-driver", Locks: []string{"simple"}, Info: map[string]locks.Declaration{"simple": {MaxGroups: 1}}}
	// A driver's lock that declares fencing is judged with the register
	// that checks its tokens, unless the run chose its workload.
	fencing := locks.Declared{Driver: "d", Locks: []string{"simple"}, Info: map[string]locks.Declaration{"simple": {MaxGroups: 1, Fencing: true}}}
	p, err = s.Prepare(scenarios.RunOptions{Locks: fencing})
	require.NoError(t, err)
	require.Equal(t, "fenced", p.WorkloadName(), "crash-simple runs the counter")
	p, err = s.Prepare(scenarios.RunOptions{Locks: fencing, Overrides: []scenarios.Override{scenarios.SetWorkload("counter")}})
	require.NoError(t, err)
	require.Equal(t, "counter", p.WorkloadName())
	p, err = s.Prepare(scenarios.RunOptions{Locks: noTLS})
	require.NoError(t, err)
	require.Equal(t, "counter", p.WorkloadName(), "no fencing declared")
	_, err = tlsScenario.Prepare(scenarios.RunOptions{Locks: noTLS})
	require.ErrorContains(t, err, "lock simple cannot run in scenario failover-simple-tls with TLS: lock simple of driver old-driver does not declare TLS")
	_, err = s.Prepare(scenarios.RunOptions{Locks: noTLS, Overrides: []scenarios.Override{scenarios.WithTLS()}})
	require.ErrorContains(t, err, "does not declare TLS")
	_, err = s.Prepare(scenarios.RunOptions{Locks: noTLS})
	require.NoError(t, err, "without TLS the old driver runs as before")

	target := endpoints.Endpoints{Topology: endpoints.Independent, Masters: []string{"m:6379"}, Resource: "r:6379",
		Addresses: map[string]string{"m:6379": "127.0.0.1:1", "r:6379": "127.0.0.1:2"}}
	_, err = s.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.WithTLS()}, Target: &target})
	require.ErrorContains(t, err, `the target names no CA ("tls_ca")`)
	target.TLSCA = "-----BEGIN CERTIFICATE-----"
	_, err = s.Prepare(scenarios.RunOptions{Target: &target})
	require.ErrorContains(t, err, "tls_ca holds no PEM certificate")
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), IsCA: true, BasicConstraintsValid: true, NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, ca, ca, &key.PublicKey, key)
	require.NoError(t, err)
	target.TLSCA = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	p, err = s.Prepare(scenarios.RunOptions{Target: &target})
	require.NoError(t, err)
	require.True(t, p.Cluster.TLS, "a target with a CA is a TLS run")
}

// Replication settings no node can run with are refused by Prepare, before
// any container starts; the flags' overrides go through the same check.
func TestBadReplicationIsRejectedBeforeAnyContainer(t *testing.T) {
	s, err := scenarios.Get("failover-simple")
	require.NoError(t, err)
	bad := s
	bad.Cluster.MinReplicasMaxLag = 1
	_, err = bad.Prepare(scenarios.RunOptions{})
	require.ErrorContains(t, err, "scenario failover-simple: min-replicas-max-lag 1 without min-replicas-to-write")
	n, lag := -1, 1
	_, err = s.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetMinReplicasToWrite(n), scenarios.SetMinReplicasMaxLag(lag)}})
	require.ErrorContains(t, err, "min-replicas-to-write must be 0 (off) or more, got -1")
	n = 1
	p, err := s.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetMinReplicasToWrite(n), scenarios.SetMinReplicasMaxLag(lag)}})
	require.NoError(t, err)
	require.Equal(t, cluster.Replication{MinReplicasToWrite: 1, MinReplicasMaxLag: 1}, p.Cluster.Replication)
	_, err = p.Prepare(scenarios.RunOptions{Overrides: []scenarios.Override{scenarios.SetNemesis("none", nil)}, Target: &endpoints.Endpoints{Topology: endpoints.Sentinel, MasterName: "m",
		Sentinels: []string{"s:26379"}, Addresses: map[string]string{"s:26379": "127.0.0.1:1"}}})
	require.ErrorContains(t, err, "a --target deployment keeps its own settings")
}

// A driver's lock that follows a failover one way only (redis-py: on
// reconnect) is asked for that way where the scenario asks for none, and
// refused where it asks for the other, before any container starts.
func TestALocksOwnWayOfFollowingAFailoverIsAskedFor(t *testing.T) {
	declared := func(modes ...string) scenarios.RunOptions {
		return scenarios.RunOptions{Driver: clienttest.Command(), Overrides: []scenarios.Override{scenarios.SetLock("mine")}, Locks: locks.Declared{Driver: "d", Locks: []string{"mine"},
			Info: map[string]locks.Declaration{"mine": {MaxGroups: 1, Sentinel: modes}}}}
	}
	s, err := scenarios.Get("failover-simple")
	require.NoError(t, err)
	got, err := s.Prepare(declared(client.SentinelReconnect))
	require.NoError(t, err)
	require.Equal(t, client.SentinelReconnect, got.LockOptions.Sentinel)
	got, err = s.Prepare(declared())
	require.NoError(t, err)
	require.Empty(t, got.LockOptions.Sentinel, "a lock that declares no way gets the protocol's default, switch")

	r, err := scenarios.Get("failover-redispy")
	require.NoError(t, err)
	_, err = r.Prepare(declared(client.SentinelSwitch))
	require.ErrorContains(t, err, "follows a Sentinel failover only by switch (its lock_info's sentinel), and the scenario asks for reconnect")
	got, err = r.Prepare(declared(client.SentinelSwitch, client.SentinelReconnect))
	require.NoError(t, err)
	require.Equal(t, client.SentinelReconnect, got.LockOptions.Sentinel)
}

// An interrupted run gives no verdict and leaves no container or network.
func TestInterruptedRunRemovesItsCluster(t *testing.T) {
	clustertest.RequireDocker(t)
	s, err := scenarios.Get("failover-redlock")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(6*time.Second, cancel)
	_, err = s.Run(ctx, scenarios.RunOptions{Seed: 1, Store: t.TempDir(), Driver: clienttest.Command()})
	require.ErrorIs(t, err, scenarios.ErrInterrupted)
	left, err := cluster.Leftovers(context.Background(), fmt.Sprintf("%s=%d", cluster.LabelPID, os.Getpid()))
	require.NoError(t, err)
	require.Empty(t, left)
}

// An interrupt while the run heals its faults is an interrupt, not an
// unhealthy cluster: no verdict, and nothing left behind.
func TestInterruptDuringTheFinalHealIsAnInterrupt(t *testing.T) {
	clustertest.RequireDocker(t)
	s, err := scenarios.Get("crash-simple")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logf := func(format string, args ...any) {
		if strings.Contains(format, "healing") {
			cancel()
		}
	}
	res, err := s.Run(ctx, scenarios.RunOptions{Seed: 1, Store: t.TempDir(), Driver: clienttest.Command(), Log: logf})
	require.ErrorIs(t, err, scenarios.ErrInterrupted, "got a result with health %q", healthOf(res))
	left, err := cluster.Leftovers(context.Background(), fmt.Sprintf("%s=%d", cluster.LabelPID, os.Getpid()))
	require.NoError(t, err)
	require.Empty(t, left)
}

func healthOf(r *reports.Results) string {
	if r == nil {
		return ""
	}
	return r.Health
}
