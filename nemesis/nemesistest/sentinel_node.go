package nemesistest

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/topology"
)

// sentinelNode is the fake Sentinel as a node a fault may target: asked
// for a failover (sentinel-failover) it does one; the faults that would
// break the Sentinel itself are refused, not pretended.
type sentinelNode struct{ s *sentinel }

var _ nemesis.Node = sentinelNode{}

func (n sentinelNode) Name() string        { return "sentinel-1" }
func (n sentinelNode) Role() topology.Role { return topology.RoleSentinel }

func (n sentinelNode) refuse(what string) error {
	return fmt.Errorf("%s: the fake cluster cannot %s its Sentinel", n.Name(), what)
}

func (n sentinelNode) Kill(context.Context) error      { return n.refuse("kill") }
func (n sentinelNode) Start(context.Context) error     { return n.refuse("restart") }
func (n sentinelNode) Heal(context.Context) error      { return nil } // nothing a fault left broken
func (n sentinelNode) Pause(context.Context) error     { return n.refuse("pause") }
func (n sentinelNode) Resume(context.Context) error    { return nil }
func (n sentinelNode) Isolate(context.Context) error   { return n.refuse("isolate") }
func (n sentinelNode) Reconnect(context.Context) error { return nil }
func (n sentinelNode) SetClock(context.Context, time.Duration) error {
	return n.refuse("move the clock of")
}

func (n sentinelNode) Client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: n.s.addr(), MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
}

func (n sentinelNode) PatientClient() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: n.s.addr(), MaxRetries: -1, ReadTimeout: 10 * time.Second, ContextTimeoutEnabled: true})
}

// Do sends the command on a patient connection of its own, closed after.
func (n sentinelNode) Do(ctx context.Context, args ...any) (any, error) {
	rdb := n.PatientClient()
	defer rdb.Close()
	return rdb.Do(ctx, args...).Result()
}

// GracefulFailover is what SENTINEL FAILOVER does: the replicas catch up
// with the master first, then one is promoted, so no write the master
// acknowledged is lost.
func (c *Cluster) GracefulFailover() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.syncLocked(); err != nil {
		return err
	}
	return c.failoverLocked()
}
