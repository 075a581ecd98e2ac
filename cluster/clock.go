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
// it), and returns once the node's TIME shows it (clockshift re-reads its
// file at most every 100 ms): a fault strikes when it is in effect, not a
// moment later. A node that does not answer TIME (paused, down) is not
// waited for.
func (n *Node) SetClock(ctx context.Context, offset time.Duration) error {
	if err := n.setClock(ctx, offset); err != nil {
		return err
	}
	return n.awaitClock(ctx, offset)
}

// awaitClock waits, up to 2 s, until the node's clock is within 50 ms of
// real time + offset.
func (n *Node) awaitClock(ctx context.Context, offset time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	rdb := n.Client()
	defer rdb.Close()
	var off time.Duration
	for {
		t, err := rdb.Time(ctx).Result()
		if err != nil {
			return nil // it answers nothing now: the file is what it will read
		}
		if off = t.Sub(time.Now()) - offset; off.Abs() < 50*time.Millisecond {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("clock of %s: still %s off %s after the offset was written", n.Name, off.Round(time.Millisecond), offset)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (n *Node) setClock(ctx context.Context, offset time.Duration) error {
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
