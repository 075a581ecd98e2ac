package nemesistest

import (
	"fmt"
	"strings"
	"sync"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"

	"github.com/deadbolt-lab/deadbolt/topology"
)

// sentinelName is the fake Sentinel's logical address, as clients name it.
const sentinelName = "sentinel-1:26379"

// sentinel answers what a Sentinel client asks of the master group: the
// master's address, its replicas, the other Sentinels (none), and on a
// failover it publishes +switch-master, so that clients that discover the
// master through Sentinel follow it. It is a miniredis server, for its
// RESP protocol and its pub/sub, with the SENTINEL command added.
type sentinel struct {
	srv *miniredis.Miniredis
	c   *Cluster

	// mu guards master and replicas, a copy of the cluster's roles: the
	// SENTINEL command reads them without the cluster's lock, which a
	// failover holds while it publishes here.
	mu       sync.Mutex
	master   string
	replicas []string
}

func startSentinel(c *Cluster) (*sentinel, error) {
	s := &sentinel{srv: miniredis.NewMiniRedis(), c: c, master: c.master.name}
	for _, n := range c.nodes[1:] {
		s.replicas = append(s.replicas, n.name)
	}
	if err := s.srv.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("sentinel: %w", err)
	}
	if err := s.srv.Server().Register("SENTINEL", s.command); err != nil {
		s.srv.Close()
		return nil, err
	}
	return s, nil
}

func (s *sentinel) close() { s.srv.Close() }

// addr is where clients reach the Sentinel.
func (s *sentinel) addr() string { return s.srv.Addr() }

// switched records a promotion and announces it as Sentinel does:
// "+switch-master <group> <old ip> <old port> <new ip> <new port>".
func (s *sentinel) switched(old, now *Node) {
	s.mu.Lock()
	s.master = now.name
	s.replicas = s.replicas[:0]
	for _, n := range now.c.nodes {
		if n != now {
			s.replicas = append(s.replicas, n.name)
		}
	}
	s.mu.Unlock()
	s.srv.Publish("+switch-master", strings.Join([]string{topology.MasterName, old.name, redisPort, now.name, redisPort}, " "))
}

// redisPort is the port of every node's logical address.
const redisPort = "6379"

// command is SENTINEL get-master-addr-by-name, replicas (or slaves),
// sentinels, master and failover, for the one group the fake has.
func (s *sentinel) command(p *server.Peer, cmd string, args []string) {
	if len(args) != 2 {
		p.WriteError(fmt.Sprintf("ERR the fake Sentinel answers SENTINEL <sub> %s only", topology.MasterName))
		return
	}
	if args[1] != topology.MasterName {
		p.WriteNull()
		return
	}
	if strings.EqualFold(args[0], "failover") {
		if err := s.c.GracefulFailover(); err != nil {
			p.WriteError("ERR " + err.Error())
			return
		}
		p.WriteOK()
		return
	}
	s.mu.Lock()
	master, replicas := s.master, append([]string(nil), s.replicas...)
	s.mu.Unlock()
	switch strings.ToLower(args[0]) {
	case "get-master-addr-by-name":
		p.WriteStrings([]string{master, redisPort})
	case "master":
		writeFields(p, nodeFields(master, "master"))
	case "replicas", "slaves":
		p.WriteLen(len(replicas))
		for _, r := range replicas {
			writeFields(p, nodeFields(r, "slave"))
		}
	case "sentinels":
		p.WriteLen(0) // the fake has one Sentinel, the one asked
	default:
		p.WriteError("ERR the fake Sentinel has no SENTINEL " + args[0])
	}
}

func nodeFields(name, flags string) []string {
	return []string{"name", name + ":" + redisPort, "ip", name, "port", redisPort, "flags", flags}
}

// writeFields writes field-value pairs as a map (a flat array on RESP2).
func writeFields(p *server.Peer, kv []string) {
	p.WriteMapLen(len(kv) / 2)
	for _, v := range kv {
		p.WriteBulk(v)
	}
}
