package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"
)

// Role is what a node runs.
type Role string

const (
	RoleRedis    Role = "redis"
	RoleSentinel Role = "sentinel"
	// RoleResource holds the data a lock protects, outside the lock service.
	RoleResource Role = "resource"
)

// ResourceName is the resource node's name.
const ResourceName = "resource"

// Node is one Redis or Sentinel container with its fault hooks.
type Node struct {
	// Name is the node's hostname on the node-to-node network, and the
	// address Redis and Sentinel report for it.
	Name     string
	Role     Role
	Port     int // inside the container
	HostPort int // published on 127.0.0.1

	c  *testcontainers.DockerContainer
	cl *Cluster

	mu       sync.Mutex
	killed   bool
	isolated bool
	clock    time.Duration // wall-clock offset, see SetClock
}

// Logical is the address other nodes and Sentinel use for this node.
func (n *Node) Logical() string { return n.Name + ":" + strconv.Itoa(n.Port) }

// Addr is the published address on 127.0.0.1.
func (n *Node) Addr() string { return "127.0.0.1:" + strconv.Itoa(n.HostPort) }

// Client is a direct connection to this node, with the cluster's timeouts.
func (n *Node) Client() *redis.Client {
	o := DefaultClientOptions().redis()
	o.Addr = n.Logical()
	o.Dialer = n.cl.book.dial
	return redis.NewClient(o)
}

// Kill sends SIGKILL: the process dies without saving or closing connections.
func (n *Node) Kill(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, err := n.cl.d.cli.ContainerKill(ctx, n.c.GetContainerID(), client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return fmt.Errorf("kill %s: %w", n.Name, err)
	}
	n.killed = true
	return nil
}

// Start starts a killed node again and waits until it answers PING. Its
// published port is pinned, so clients find it where it was.
func (n *Node) Start(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.c.Start(ctx); err != nil {
		return fmt.Errorf("start %s: %w", n.Name, err)
	}
	n.killed = false
	return nil
}

// Isolate disconnects the node from the node-to-node network: replicas and
// Sentinels lose it, while clients still reach it through its published port.
func (n *Node) Isolate(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, err := n.cl.d.cli.NetworkDisconnect(ctx, n.cl.nodesNet, client.NetworkDisconnectOptions{Container: n.c.GetContainerID(), Force: true})
	if err != nil {
		return fmt.Errorf("isolate %s: %w", n.Name, err)
	}
	n.isolated = true
	return nil
}

// Pause freezes every process of the node (docker pause, the cgroup
// freezer): it answers nothing, yet its connections stay open, as a node
// stalled in a long GC, swap or a stopped VM. Resume or Heal undoes it.
func (n *Node) Pause(ctx context.Context) error {
	if _, err := n.cl.d.cli.ContainerPause(ctx, n.c.GetContainerID(), client.ContainerPauseOptions{}); err != nil {
		return fmt.Errorf("pause %s: %w", n.Name, err)
	}
	return nil
}

// Resume thaws a paused node.
func (n *Node) Resume(ctx context.Context) error {
	if _, err := n.cl.d.cli.ContainerUnpause(ctx, n.c.GetContainerID(), client.ContainerUnpauseOptions{}); err != nil {
		return fmt.Errorf("resume %s: %w", n.Name, err)
	}
	return nil
}

// paused asks Docker, not a flag, so a heal finds a pause whoever made it.
func (n *Node) paused(ctx context.Context) (bool, error) {
	r, err := n.cl.d.cli.ContainerInspect(ctx, n.c.GetContainerID(), client.ContainerInspectOptions{})
	if err != nil {
		return false, fmt.Errorf("inspect %s: %w", n.Name, err)
	}
	return r.Container.State != nil && r.Container.State.Paused, nil
}

// Heal thaws a paused node, reconnects an isolated one under its name and
// starts a killed one.
func (n *Node) Heal(ctx context.Context) error {
	if paused, err := n.paused(ctx); err != nil {
		return err
	} else if paused {
		if err := n.Resume(ctx); err != nil {
			return err
		}
	}
	n.mu.Lock()
	isolated, killed := n.isolated, n.killed
	n.mu.Unlock()
	if isolated {
		_, err := n.cl.d.cli.NetworkConnect(ctx, n.cl.nodesNet, client.NetworkConnectOptions{
			Container:      n.c.GetContainerID(),
			EndpointConfig: &network.EndpointSettings{Aliases: []string{n.Name}},
		})
		if err != nil {
			return fmt.Errorf("reconnect %s: %w", n.Name, err)
		}
		n.mu.Lock()
		n.isolated = false
		n.mu.Unlock()
	}
	if killed {
		return n.Start(ctx)
	}
	return nil
}

// Ping checks that the node answers.
func (n *Node) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	rdb := n.Client()
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("%s does not answer PING: %w", n.Name, err)
	}
	return nil
}

// SaveLog writes the container's log to dir/<name>.log.
func (n *Node) SaveLog(ctx context.Context, dir string) error {
	rc, err := n.c.Logs(ctx)
	if err != nil {
		return fmt.Errorf("logs of %s: %w", n.Name, err)
	}
	defer rc.Close()
	f, err := os.Create(filepath.Join(dir, n.Name+".log"))
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, rc)
	return err
}
