package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
)

// Every node has a fixed address on the nodes network, and every node's
// /etc/hosts lists them all. Docker's DNS forgets a killed, restarting or
// isolated node, and on an internal network a question for a name it does
// not know goes unanswered until the resolver's timeout (1 s here, on every
// question). Sentinel resolves in its event loop: a few such stalls in a
// row put it in TILT mode for 30 s, and a failover came late or never. A
// name in /etc/hosts resolves at once, whether its node is up or not.
type hosts struct {
	subnet netip.Prefix
	addrs  map[string]netip.Addr
	names  []string
}

func newHosts(subnet netip.Prefix, names []string) *hosts {
	h := &hosts{subnet: subnet, addrs: map[string]netip.Addr{}, names: names}
	a := subnet.Addr()
	for range 10 { // .1 is the gateway; leave a few
		a = a.Next()
	}
	for _, n := range names {
		a = a.Next()
		h.addrs[n] = a
	}
	return h
}

// extraHosts is every node's /etc/hosts entry, as Docker takes them.
func (h *hosts) extraHosts() []string {
	var out []string
	for _, n := range h.names {
		out = append(out, n+":"+h.addrs[n].String())
	}
	return out
}

// endpoint is a node's settings on the nodes network: its name and address.
func (h *hosts) endpoint(name string) *network.EndpointSettings {
	return &network.EndpointSettings{
		Aliases:    []string{name},
		IPAMConfig: &network.EndpointIPAMConfig{IPv4Address: h.addrs[name]},
	}
}

// nodesNetwork creates the internal nodes network on a /24 of 10.0.0.0/8
// that no other network uses (runs may go on side by side), and assigns
// the nodes' addresses in it.
func (c *Cluster) nodesNetwork(ctx context.Context) error {
	full := c.Run + "-nodes"
	var lastErr error
	for range 30 {
		subnet := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(100 + rand.IntN(150)), byte(rand.IntN(256)), 0}), 24)
		r, err := c.d.cli.NetworkCreate(ctx, full, client.NetworkCreateOptions{
			Driver: "bridge", Internal: true, Labels: c.networkLabels(),
			IPAM: &network.IPAM{Config: []network.IPAMConfig{{Subnet: subnet}}},
		})
		if err == nil {
			c.nodesNet, c.hosts = r.ID, newHosts(subnet, c.Spec.NodeNames())
			return nil
		}
		lastErr = err
		if !strings.Contains(err.Error(), "overlap") {
			break
		}
	}
	return fmt.Errorf("create network %s: %w", full, lastErr)
}
