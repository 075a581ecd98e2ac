package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/topology"
)

// Role is what a node runs: package topology's roles, under the names
// cluster's users know.
type Role = topology.Role

const (
	RoleRedis    = topology.RoleRedis
	RoleSentinel = topology.RoleSentinel
	// RoleResource holds the data a lock protects, outside the lock service.
	RoleResource = topology.RoleResource
)

// ResourceName is the resource node's name.
const ResourceName = topology.ResourceName

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
	// addr is where an attached node is reached (Attach); "" for the
	// nodes deadbolt starts, reached on their published port.
	addr string

	mu    sync.Mutex
	clock time.Duration // wall-clock offset, see SetClock
	// tearing is the outcome of a kill whose teardown by Docker Kill left
	// running (kill.go); nil when none is.
	tearing <-chan error
}

// Logical is the address other nodes and Sentinel use for this node.
func (n *Node) Logical() string {
	if _, _, err := net.SplitHostPort(n.Name); err == nil {
		return n.Name // an attached node named by its whole address
	}
	return net.JoinHostPort(n.Name, strconv.Itoa(n.Port))
}

// Addr is the published address on 127.0.0.1.
func (n *Node) Addr() string {
	if n.addr != "" {
		return n.addr
	}
	return "127.0.0.1:" + strconv.Itoa(n.HostPort)
}

// Client is a direct connection to this node, with the cluster's timeouts
// and the harness's credentials: the admin user (AdminUser) on the nodes
// deadbolt starts, the target's (its Sentinel credentials on a Sentinel)
// on an attached cluster.
func (n *Node) Client() *redis.Client { return n.clientWith(endpoints.DefaultClientOptions()) }

// PatientClient is Client with patient timeouts, for the steps that form a
// cluster once and cannot be retried, and for a fault's own command: on a
// loaded machine a node's reply can take longer than the half second a
// probe waits, and a fault whose command timed out cannot tell whether it
// struck (the run is unknown); the history stamps when it did.
func (n *Node) PatientClient() *redis.Client { return n.clientWith(endpoints.PatientClientOptions()) }

func (n *Node) clientWith(o endpoints.ClientOptions) *redis.Client {
	user, pass := n.cl.Admin()
	if t := n.cl.target; t != nil && n.Role == RoleSentinel {
		user, pass = t.SentinelUsername, t.SentinelPassword
	}
	return n.cl.dialer.AuthClient(n.Logical(), o, user, pass)
}

// Start starts a killed node again and waits until it answers PING. Its
// published port is pinned, so clients find it where it was.
func (n *Node) Start(ctx context.Context) error {
	if err := n.container(); err != nil {
		return err
	}
	if err := n.c.Start(ctx); err != nil {
		return fmt.Errorf("start %s: %w", n.Name, err)
	}
	return nil
}

// Isolate disconnects the node from the node-to-node network: replicas and
// Sentinels lose it, while clients still reach it through its published port.
func (n *Node) Isolate(ctx context.Context) error {
	if err := n.container(); err != nil {
		return err
	}
	_, err := n.cl.d.cli.NetworkDisconnect(ctx, n.cl.nodesNet, client.NetworkDisconnectOptions{Container: n.c.GetContainerID(), Force: true})
	if err != nil {
		return fmt.Errorf("isolate %s: %w", n.Name, err)
	}
	return nil
}

// Reconnect joins an isolated node to the node-to-node network again under
// its name; a node that is connected stays as it is.
func (n *Node) Reconnect(ctx context.Context) error {
	if st, err := n.state(ctx); err != nil {
		return err
	} else if st.connected {
		return nil
	}
	return n.reconnect(ctx)
}

func (n *Node) reconnect(ctx context.Context) error {
	if err := n.container(); err != nil {
		return err
	}
	_, err := n.cl.d.cli.NetworkConnect(ctx, n.cl.nodesNet, client.NetworkConnectOptions{
		Container:      n.c.GetContainerID(),
		EndpointConfig: n.cl.hosts.endpoint(n.Name),
	})
	if err != nil {
		return fmt.Errorf("reconnect %s: %w", n.Name, err)
	}
	return nil
}

// Pause freezes every process of the node (docker pause, the cgroup
// freezer): it answers nothing, yet its connections stay open, as a node
// stalled in a long GC, swap or a stopped VM. Resume or Heal undoes it.
func (n *Node) Pause(ctx context.Context) error {
	if err := n.container(); err != nil {
		return err
	}
	var err error
	for try := 0; try < pauseTries; try++ {
		_, err = n.cl.d.cli.ContainerPause(ctx, n.c.GetContainerID(), client.ContainerPauseOptions{})
		if err == nil || !strings.Contains(err.Error(), "unable to freeze") || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("pause %s: %w", n.Name, err)
	}
	return nil
}

// pauseTries bounds the pause's tries: on a loaded machine the cgroup
// freezer may time out before every task stops ("unable to freeze"), and
// runc thaws the node again, so a try that failed left nothing behind.
const pauseTries = 3

// Resume thaws a paused node.
func (n *Node) Resume(ctx context.Context) error {
	if err := n.container(); err != nil {
		return err
	}
	if _, err := n.cl.d.cli.ContainerUnpause(ctx, n.c.GetContainerID(), client.ContainerUnpauseOptions{}); err != nil {
		return fmt.Errorf("resume %s: %w", n.Name, err)
	}
	return nil
}

// state asks Docker, not flags kept by whoever broke the node, so a heal
// finds every fault, whatever made it.
type state struct{ running, paused, connected bool }

func (n *Node) state(ctx context.Context) (state, error) {
	if err := n.container(); err != nil {
		return state{}, err
	}
	r, err := n.cl.d.cli.ContainerInspect(ctx, n.c.GetContainerID(), client.ContainerInspectOptions{})
	if err != nil {
		return state{}, fmt.Errorf("inspect %s: %w", n.Name, err)
	}
	var st state
	if s := r.Container.State; s != nil {
		st.running, st.paused = s.Running, s.Paused
	}
	if ns := r.Container.NetworkSettings; ns != nil {
		for _, ep := range ns.Networks {
			if ep != nil && ep.NetworkID == n.cl.nodesNet {
				st.connected = true
			}
		}
	}
	return st, nil
}

// Heal undoes whatever fault the node is in, as Docker reports it: thaws a
// paused node, reconnects an isolated one and starts a stopped one. Faults
// heal themselves; this is the end of a run's safety net.
func (n *Node) Heal(ctx context.Context) error {
	if n.c == nil {
		return nil // deadbolt broke nothing on a node it did not start
	}
	st, err := n.state(ctx)
	if err != nil {
		return err
	}
	if st.paused {
		if err := n.Resume(ctx); err != nil {
			return err
		}
	}
	if !st.connected {
		if err := n.reconnect(ctx); err != nil {
			return err
		}
	}
	if !st.running {
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
	if err := n.container(); err != nil {
		return err
	}
	var since string
	if t := n.cl.logsSince; !t.IsZero() {
		since = fmt.Sprintf("%d.%09d", t.Unix(), t.Nanosecond())
	}
	rc, err := n.cl.d.cli.ContainerLogs(ctx, n.c.GetContainerID(), client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Since: since})
	if err != nil {
		return fmt.Errorf("logs of %s: %w", n.Name, err)
	}
	defer rc.Close()
	f, err := os.Create(filepath.Join(dir, n.Name+".log"))
	if err != nil {
		return err
	}
	defer f.Close()
	// The image has no TTY: stdout and stderr come multiplexed.
	_, err = stdcopy.StdCopy(f, f, rc)
	return err
}
