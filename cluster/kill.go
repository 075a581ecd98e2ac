package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/moby/moby/client"

	"github.com/deadbolt-lab/deadbolt/endpoints"
)

// Kill sends SIGKILL: the process dies without saving or closing
// connections. It returns once Docker has stopped the container or,
// sooner, once the server that answered before the kill is gone (its
// connection closed or refused): on a loaded machine Docker took up to
// 3.9 s to tear a killed container down, and a fault aimed at a held lease
// must strike within the lease. The teardown then finishes before anything
// else is done to the container (settle).
func (n *Node) Kill(ctx context.Context) error {
	if err := n.container(); err != nil {
		return err
	}
	o := endpoints.DefaultClientOptions()
	o.PoolSize = 1
	probe := n.clientWith(o)
	defer probe.Close()
	answered := probe.Ping(ctx).Err() == nil
	done := make(chan error, 1)
	go func() {
		_, err := n.cl.d.cli.ContainerKill(context.WithoutCancel(ctx), n.c.GetContainerID(), client.ContainerKillOptions{Signal: "KILL"})
		done <- err
	}()
	if !answered {
		return n.killed(<-done) // nothing to watch: Docker's word alone
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return n.killed(err)
		case <-tick.C:
			if gone(probe.Ping(ctx).Err()) {
				n.mu.Lock()
				n.tearing = done
				n.mu.Unlock()
				return nil
			}
		case <-ctx.Done():
			return n.killed(<-done)
		}
	}
}

// gone reports an error that only a server no longer there gives: its
// connection closed or reset, or refused. A timeout says nothing: a
// loaded server answers late.
func gone(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// settle waits for the teardown a Kill left running, and says how it
// ended.
func (n *Node) settle() error {
	n.mu.Lock()
	tearing := n.tearing
	n.tearing = nil
	n.mu.Unlock()
	if tearing == nil {
		return nil
	}
	return n.killed(<-tearing)
}

// killed is how Docker's kill of the node ended, as Kill reports it.
func (n *Node) killed(err error) error {
	if err != nil {
		return fmt.Errorf("kill %s: %w", n.Name, err)
	}
	return nil
}
