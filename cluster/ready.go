package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/testcontainers/testcontainers-go/wait"
)

// pingReady waits until the node answers PING on its published port, as the
// harness reaches it (Node.Client: its credentials, and TLS when the
// cluster has it). Log lines would match the previous start's "Ready to
// accept connections" after a restart, and the port checks of
// testcontainers need a shell the scratch image does not have.
type pingReady struct {
	node    *Node
	timeout time.Duration
}

var _ wait.Strategy = pingReady{}

func (p pingReady) WaitUntilReady(ctx context.Context, _ wait.StrategyTarget) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	rdb := p.node.Client()
	defer rdb.Close()
	var err error
	for {
		if err = rdb.Ping(ctx).Err(); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer PING: %v", p.node.Addr(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
