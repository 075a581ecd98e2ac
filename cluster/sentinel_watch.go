package cluster

import (
	"context"
	"net"
	"strings"
	"sync"
	"time"
)

// SentinelEvent is something a Sentinel announced on its event channels,
// or a switch of a Redis Cluster's slot master (WatchFailovers).
type SentinelEvent struct {
	// Sentinel is the node that announced it ("cluster" for a majority of
	// a cluster's nodes).
	Sentinel string
	// Kind is the channel: "+switch-master", "+tilt" or "-tilt".
	Kind string
	// From and To are a switch's old and new master, by node name where
	// the address is a node's.
	From, To string
}

// The channels WatchSentinels listens on.
var sentinelChannels = []string{"+switch-master", "+tilt", "-tilt"}

// WatchFailovers tells seen what every Sentinel announces (master switches,
// TILT mode) until stop is called, whoever caused it: a failover the
// nemesis never staged must show in the history like one it did. It
// returns once every Sentinel's subscription is confirmed (or could not
// be, which it does not treat as fatal: a missing watch only leaves the
// history without those events). seen may be called from several
// goroutines at once. On the cluster topology it reports each switch of
// the primary key's slot master (watchSlotMaster); elsewhere, without
// Sentinels, it watches nothing.
func (c *Cluster) WatchFailovers(ctx context.Context, seen func(SentinelEvent)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if c.Spec.Topology == RedisCluster && c.target == nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.watchSlotMaster(ctx, seen)
		}()
	}
	for _, n := range c.ByRole(RoleSentinel) {
		rdb := n.Client()
		ps := rdb.Subscribe(ctx, sentinelChannels...)
		sub, scancel := context.WithTimeout(ctx, 5*time.Second)
		_, _ = ps.Receive(sub) // the subscription's confirmation
		scancel()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer rdb.Close()
			defer ps.Close()
			ch := ps.Channel()
			for {
				select {
				case <-ctx.Done():
					return
				case m, ok := <-ch:
					if !ok {
						return
					}
					ev := SentinelEvent{Sentinel: n.Name, Kind: m.Channel}
					if m.Channel == "+switch-master" {
						// "<group> <old host> <old port> <new host> <new port>"
						f := strings.Fields(m.Payload)
						if len(f) != 5 || f[0] != c.masterName() {
							continue
						}
						ev.From, ev.To = c.nodeAt(f[1], f[2]), c.nodeAt(f[3], f[4])
					}
					seen(ev)
				}
			}
		}()
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// nodeAt names the node Sentinel reports at host:port, or the address.
func (c *Cluster) nodeAt(host, port string) string {
	addr := net.JoinHostPort(host, port)
	for _, n := range c.Nodes {
		if n.Logical() == addr {
			return n.Name
		}
	}
	return addr
}
