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
	"github.com/deadbolt-lab/deadbolt/locks"
)

// BenchmarkProtocolCycle is the client protocol's cost: one acquire +
// release of the simple lock through a client process ("simple") against
// the same lock called in the benchmark's own process ("ceiling"), both on
// one master. Each iteration of "simple" also times one in-process cycle,
// alternating the order, so that its x-ceiling ratio compares the two under
// the same moment's load; ns/op minus the ceiling's is what a request and
// its reply over the pipes add.
func BenchmarkProtocolCycle(b *testing.B) {
	c := clustertest.Start(b, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	inProcess := inProcessCycle(b, c)
	b.Run("ceiling", func(b *testing.B) {
		inProcess()
		for b.Loop() {
			inProcess()
		}
	})
	b.Run("simple", func(b *testing.B) {
		p, err := client.Start(clienttest.Command(), client.Options{})
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
		call(client.Request{Op: client.OpOpen, Lock: "simple", TTLMS: 10_000, Endpoints: &e})
		n := 0
		cycle := func() {
			n++
			lease := "p0." + strconv.Itoa(n)
			call(client.Request{Op: client.OpAcquire, Key: "bench:protocol", Lease: lease})
			call(client.Request{Op: client.OpRelease, Lease: lease})
		}
		cycle()
		clustertest.Interleaved(b, cycle, inProcess)
	})
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
