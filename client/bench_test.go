package client_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/drivers"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// BenchmarkProtocolCycle is the client protocol's cost: one acquire +
// release of the simple lock through a client process ("simple") against
// the same lock called in the benchmark's own process ("ceiling"), both on
// one master; and, beside them, redis-py's Lock through the shipped Python
// driver ("redispy", when /usr/bin/python3 has python3-redis). Each
// iteration of a driver's row also times one in-process cycle, alternating
// the order, so that its x-ceiling ratio compares the two under the same
// moment's load; ns/op minus the ceiling's is what a request and its reply
// over the pipes add (and, for redispy, Python and redis-py).
func BenchmarkProtocolCycle(b *testing.B) {
	c := clustertest.Start(b, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	inProcess := inProcessCycle(b, c)
	b.Run("ceiling", func(b *testing.B) {
		inProcess()
		for b.Loop() {
			inProcess()
		}
	})
	b.Run("simple", func(b *testing.B) { driverCycle(b, c, clienttest.Command(), "simple", inProcess) })
	b.Run("redispy", func(b *testing.B) {
		d, err := drivers.Get("redispy")
		if err != nil {
			b.Fatal(err)
		}
		cmd, err := d.Command()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := client.Probe(cmd); err != nil {
			b.Skipf("the redis-py driver does not start (it needs %s): %v", d.Needs, err)
		}
		driverCycle(b, c, cmd, "redispy", inProcess)
	})
}

// driverCycle times acquire + release of lock through the driver cmd,
// interleaved with the in-process cycle.
func driverCycle(b *testing.B, c *cluster.Cluster, cmd client.Command, lock string, inProcess func()) {
	p, err := client.Start(cmd, client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Kill()
	ctx := context.Background()
	e := c.Endpoints()
	call := func(req client.Request) {
		r, err := p.Call(ctx, req, 10*time.Second)
		if err == nil && r.Outcome != client.OutcomeOK {
			b.Fatalf("%s: %s %s", req.Op, r.Outcome, r.Error)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	call(client.Request{Op: client.OpOpen, Lock: lock, TTLMS: 10_000, Endpoints: &e})
	n := 0
	cycle := func() {
		n++
		lease := "p0." + strconv.Itoa(n)
		call(client.Request{Op: client.OpAcquire, Key: "bench:protocol", Lease: lease})
		call(client.Request{Op: client.OpRelease, Lease: lease})
	}
	cycle()
	clustertest.Interleaved(b, cycle, inProcess)
}

func inProcessCycle(b *testing.B, c *cluster.Cluster) func() {
	l, err := locks.New("simple", c.Endpoints(), locks.Options{TTL: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { locks.Close(l) })
	ctx := context.Background()
	return func() {
		lease, err := l.Acquire(ctx, "bench:in-process")
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx, lease); err != nil {
			b.Fatal(err)
		}
	}
}
