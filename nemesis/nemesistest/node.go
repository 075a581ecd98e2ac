package nemesistest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/topology"
)

// Node is one Redis node of the fake: a miniredis server on 127.0.0.1,
// reached by real clients, that faults kill, pause and isolate.
type Node struct {
	name string
	role topology.Role
	c    *Cluster

	mu       sync.Mutex
	srv      *miniredis.Miniredis
	addr     string
	down     bool // killed
	paused   bool // paused: it answers nothing
	frozen   bool // its server's lock is held, which keeps it paused
	isolated bool // cut off from its peers, not from clients
	master   bool // it takes writes: it believes it is a master
	clock    time.Duration
	// forwarded is when its keys' TTLs were last moved on with the clock.
	forwarded time.Time
	stop      chan struct{}
}

func newNode(c *Cluster, name string, role topology.Role) (*Node, error) {
	n := &Node{name: name, role: role, c: c}
	if err := n.serve(""); err != nil {
		return nil, err
	}
	return n, nil
}

// serve starts a fresh, empty server at addr ("": any free port).
func (n *Node) serve(addr string) error {
	srv := miniredis.NewMiniRedis()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if err := srv.StartAddr(addr); err != nil {
		return fmt.Errorf("%s: %w", n.name, err)
	}
	srv.Server().SetPreHook(n.refuseWrites)
	n.srv, n.addr, n.down, n.forwarded = srv, srv.Addr(), false, time.Now()
	n.stop = make(chan struct{})
	go n.expire(srv, n.stop)
	return nil
}

// expire moves the server's TTLs on with wall time: miniredis expires keys
// only when told time passed. A paused server's turn waits for its thaw,
// and then catches up, as a thawed Redis finds its leases run out.
func (n *Node) expire(srv *miniredis.Miniredis, stop <-chan struct{}) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		n.mu.Lock()
		now := time.Now()
		d := now.Sub(n.forwarded)
		paused := n.paused
		if !paused {
			n.forwarded = now
		}
		n.mu.Unlock()
		if !paused {
			srv.FastForward(d)
		}
	}
}

func (n *Node) Name() string        { return n.name }
func (n *Node) Role() topology.Role { return n.role }

// logical is the node's address as clients and the Sentinel name it.
func (n *Node) logical() string { return n.name + ":" + redisPort }

// Addr is where clients reach the node; it stays the same across a kill.
func (n *Node) Addr() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.addr
}

// Kill stops the server; its data is gone (no persistence). A killed
// master is failed over.
func (n *Node) Kill(ctx context.Context) error {
	n.mu.Lock()
	if n.down {
		n.mu.Unlock()
		return nil
	}
	n.thawLocked()
	n.down = true
	close(n.stop)
	srv := n.srv
	n.mu.Unlock()
	srv.Close()
	n.c.unreachable(n)
	return nil
}

// Start brings a killed node back, empty, at its old address, as a
// replica of the current master.
func (n *Node) Start(ctx context.Context) error {
	n.mu.Lock()
	if !n.down {
		n.mu.Unlock()
		return nil
	}
	err := n.serve(n.addr)
	n.mu.Unlock()
	if err != nil {
		return err
	}
	n.c.rejoined(n)
	return nil
}

// Heal starts or thaws the node, whatever a fault left it as.
func (n *Node) Heal(ctx context.Context) error {
	if err := n.Start(ctx); err != nil {
		return err
	}
	if err := n.Resume(ctx); err != nil {
		return err
	}
	return n.Reconnect(ctx)
}

// Pause freezes the node: its connections stay open, and every command
// waits until Resume (miniredis runs commands under its server's lock).
func (n *Node) Pause(ctx context.Context) error {
	n.mu.Lock()
	switch {
	case n.down:
		n.mu.Unlock()
		return fmt.Errorf("%s is down", n.name)
	case n.paused:
		n.mu.Unlock()
		return nil
	}
	n.paused = true
	srv := n.srv
	n.mu.Unlock()
	// Failed over before the freeze: a replication that reads the server
	// runs under the cluster's lock, which unreachable waits for.
	n.c.unreachable(n)
	srv.Lock()
	n.mu.Lock()
	n.frozen = true
	n.mu.Unlock()
	return nil
}

// Resume thaws a paused node.
func (n *Node) Resume(ctx context.Context) error {
	n.mu.Lock()
	was := n.paused
	n.thawLocked()
	n.mu.Unlock()
	if was {
		n.c.rejoined(n)
	}
	return nil
}

func (n *Node) thawLocked() {
	if n.frozen {
		n.frozen = false
		n.srv.Unlock()
	}
	n.paused = false
}

// Isolate cuts the node off from its peers: replication to and from it
// stops, and an isolated master is failed over. Clients still reach it.
func (n *Node) Isolate(ctx context.Context) error {
	n.mu.Lock()
	n.isolated = true
	n.mu.Unlock()
	n.c.unreachable(n)
	return nil
}

// Reconnect undoes Isolate.
func (n *Node) Reconnect(ctx context.Context) error {
	n.mu.Lock()
	was := n.isolated
	n.isolated = false
	n.mu.Unlock()
	if was {
		n.c.rejoined(n)
	}
	return nil
}

// SetClock moves the node's clock to offset from true time. Only a jump
// forward does anything: it runs its keys' TTLs down by the jump; moving
// back, a key already expired stays expired, as it would on Redis.
func (n *Node) SetClock(ctx context.Context, offset time.Duration) error {
	if !n.c.opts.ClockFaults {
		return fmt.Errorf("%s: the cluster was started without clock faults (Options.ClockFaults)", n.name)
	}
	n.mu.Lock()
	by := offset - n.clock
	n.clock = offset
	srv, down, paused := n.srv, n.down, n.paused
	n.mu.Unlock()
	if down || paused {
		return fmt.Errorf("%s does not answer", n.name)
	}
	if by > 0 {
		srv.FastForward(by)
	}
	return nil
}

// Client is a new connection to the node.
func (n *Node) Client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: n.Addr(), MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
}

// PatientClient is a new connection that waits longer for a reply, and
// no longer than a call's context allows.
func (n *Node) PatientClient() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: n.Addr(), MaxRetries: -1, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second, ContextTimeoutEnabled: true})
}

// Do sends the command on a patient connection of its own, closed after.
func (n *Node) Do(ctx context.Context, args ...any) (any, error) {
	rdb := n.PatientClient()
	defer rdb.Close()
	return rdb.Do(ctx, args...).Result()
}

// setMaster makes the node take writes, or refuse them as a replica.
func (n *Node) setMaster(m bool) {
	n.mu.Lock()
	n.master = m
	n.mu.Unlock()
}

// reachable reports whether its peers reach the node.
func (n *Node) reachable() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return !n.down && !n.paused && !n.isolated
}

// server is the node's miniredis, nil while it is down or paused.
func (n *Node) server() *miniredis.Miniredis {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.down || n.paused {
		return nil
	}
	return n.srv
}

// close stops the node for good.
func (n *Node) close() {
	n.mu.Lock()
	n.thawLocked()
	down := n.down
	n.down = true
	if !down {
		close(n.stop)
	}
	srv := n.srv
	n.mu.Unlock()
	if !down {
		srv.Close()
	}
}

var errDown = errors.New("does not answer")
