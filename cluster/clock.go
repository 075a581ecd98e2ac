package cluster

import (
	"context"
	"fmt"
	"time"
)

// Clock faults go through clockshift (cluster/image/clockshift.c),
// preloaded into every lock-service Redis (not Sentinel, not the resource)
// of a cluster started with Spec.ClockFaults. It re-reads the offset from a
// file at most every 100 ms, so a jump takes effect without a restart.
// CLOCK_MONOTONIC stays real: Redis's event loop keeps its timers, and only
// what Redis reads as wall time (key expiry among it) jumps. libfaketime,
// also in the image, cannot be used: it hangs Redis's jemalloc at start.
const (
	clockShiftLib  = "/usr/lib/deadbolt/clockshift.so"
	clockShiftFile = "/tmp/clock.offset"
)

func clockShiftEnv() map[string]string {
	return map[string]string{"LD_PRELOAD": clockShiftLib, "CLOCKSHIFT_FILE": clockShiftFile}
}

// clockShiftOffset is the file's text for an offset: signed nanoseconds.
func clockShiftOffset(d time.Duration) string {
	return fmt.Sprintf("%+d\n", d.Nanoseconds())
}

// SetClock moves the node's wall clock to real time + offset (0 restores
// it). It takes effect within 100 ms.
func (n *Node) SetClock(ctx context.Context, offset time.Duration) error {
	if err := n.container(); err != nil {
		return err
	}
	if !n.cl.Spec.ClockFaults {
		return fmt.Errorf("clock of %s: the cluster was started without clock faults (Spec.ClockFaults)", n.Name)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.c.CopyToContainer(ctx, []byte(clockShiftOffset(offset)), clockShiftFile, 0o644); err != nil {
		return fmt.Errorf("clock of %s: %w", n.Name, err)
	}
	n.clock = offset
	return nil
}

// Clock is the node's current clock offset.
func (n *Node) Clock() time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.clock
}

// Now asks the node for its wall clock (TIME), so a test can see a jump.
func (n *Node) Now(ctx context.Context) (time.Time, error) {
	rdb := n.Client()
	defer rdb.Close()
	t, err := rdb.Time(ctx).Result()
	if err != nil {
		return time.Time{}, fmt.Errorf("TIME on %s: %w", n.Name, err)
	}
	return t, nil
}
