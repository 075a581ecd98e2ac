package broken_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// refusals counts the watchdog's renewals that Redis refused.
type refusals struct {
	mu sync.Mutex
	n  int
}

func (r *refusals) Renewing(*locks.Lease) {}
func (r *refusals) Renewed(_ *locks.Lease, err error) {
	if errors.Is(err, locks.ErrNotHeld) {
		r.mu.Lock()
		r.n++
		r.mu.Unlock()
	}
}
func (r *refusals) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// A key deleted under a held lease: both watchdogs find it gone at their
// next renewal; reentrant tells its holder (Lost closes), reentrant-mute
// does not (no Lost to watch).
func TestReentrantMuteHidesTheLossItsWatchdogFound(t *testing.T) {
	c := clustertest.Start(t, cluster.Spec{Topology: cluster.Independent, Masters: 1})
	rdb := c.Clients(endpoints.DefaultClientOptions())[0]
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	const ttl = 600 * time.Millisecond
	for name, tells := range map[string]bool{"reentrant": true, "reentrant-mute": false} {
		t.Run(name, func(t *testing.T) {
			var ev refusals
			l := clustertest.NewLock(t, name, c, locks.Options{TTL: ttl, Events: &ev})
			key := "mute:" + name
			lease, err := l.Acquire(ctx, key)
			require.NoError(t, err)
			require.NoError(t, rdb.Del(ctx, key).Err(), "the key is lost under its holder")
			require.Eventually(t, func() bool { return ev.count() > 0 }, 5*ttl, 10*time.Millisecond, "the watchdog's next renewal is refused")
			if !tells {
				require.Nil(t, lease.Lost, "the holder has nothing that could tell it")
				return
			}
			select {
			case <-lease.Lost:
			case <-time.After(5 * ttl):
				t.Fatal("reentrant found its key gone and never closed Lost")
			}
		})
	}
}
