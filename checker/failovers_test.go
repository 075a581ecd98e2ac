package checker

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/history"
)

// observed records what a Sentinel announced (a failover or TILT) at t.
func (b *builder) observed(f history.F, sentinel, node string, t int64) *builder {
	return b.call(history.Op{Time: t, Process: history.NemesisProcess, F: f, Fault: sentinel, Node: node}, history.OK, t, nil)
}

// isolatedFailover is failover-simple-wait's staging: redis-1 isolated from
// 3 s to 11 s, Sentinel promotes redis-2 at 5 s; two clients take turns.
func isolatedFailover() *builder {
	return turns(newHistory().fault("isolate-primary", "redis-1", ms(3000), ms(11000)).
		observed(history.Failover, "sentinel-1", "redis-1 -> redis-2", ms(5000)))
}

// turns adds two clients that take and release k0 in turn, never together.
func turns(b *builder) *builder {
	for i := int64(0); i < 12; i++ {
		p := int(i % 2)
		lease := fmt.Sprintf("p%d.%d", p, i+1)
		b.acquire(p, "k0", lease, ms(1000*i), ms(1000*i+5), ms(2000), 0).
			release(history.OK, p, "k0", lease, ms(1000*i+500), ms(1000*i+505))
	}
	return b
}

func TestAFailoverOfTheFaultedMasterIsStaged(t *testing.T) {
	r := Check(isolatedFailover().build(), Options{})
	assert.NotContains(t, kinds(r.Anomalies), KindUnstagedFailover, r.Reason)
	assert.Equal(t, Valid, r.Verdict, r.Reason)

	// A graceful failover the nemesis asked for stages the switch it makes.
	asked := newHistory().fault("sentinel-failover", "sentinel-2", ms(3000), ms(3100)).
		observed(history.Failover, "sentinel-2", "redis-1 -> redis-3", ms(3050))
	r = Check(turns(asked).build(), Options{})
	assert.NotContains(t, kinds(r.Anomalies), KindUnstagedFailover, r.Reason)

	// So does a CLUSTER FAILOVER asked of the replica that takes over.
	manual := newHistory().fault("cluster-failover", "redis-4", ms(3000), ms(3300)).
		observed(history.Failover, "cluster", "redis-1 -> redis-4", ms(3200))
	r = Check(turns(manual).build(), Options{})
	assert.NotContains(t, kinds(r.Anomalies), KindUnstagedFailover, r.Reason)
}

// A cluster failover asked of one replica does not stage a switch to
// another node.
func TestAClusterFailoverStagesOnlyItsOwnPromotion(t *testing.T) {
	b := newHistory().fault("cluster-failover", "redis-4", ms(3000), ms(3300)).
		observed(history.Failover, "cluster", "redis-1 -> redis-5", ms(3200))
	r := Check(turns(b).build(), Options{})
	require.Equal(t, Unknown, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "the cluster moved the primary key's slot from master redis-1 to redis-5 at 3.2s, and no fault had touched redis-1")
}

// A switch away from a master no fault touched (seed 8 of the stress suite:
// sentinel-2 starved into TILT, and on leaving it finished a failover of the
// healthy new master begun on a stale view) makes the run unknown, however
// the checks judged the lock, and names the TILT.
func TestAFailoverNoFaultStagedMakesTheRunUnknown(t *testing.T) {
	b := isolatedFailover().
		observed(history.Tilt, "sentinel-2", "entered", ms(6000)).
		observed(history.Tilt, "sentinel-2", "left", ms(9000)).
		observed(history.Failover, "sentinel-2", "redis-2 -> redis-1", ms(9500))
	r := Check(b.build(), Options{})
	require.Equal(t, Unknown, r.Verdict, r.Reason)
	require.Contains(t, kinds(r.Anomalies), KindUnstagedFailover)
	assert.Contains(t, r.Reason, "Sentinel switched the master from redis-2 to redis-1 at 9.5s (first told by sentinel-2), and no fault had touched redis-2")
	assert.Contains(t, r.Reason, "sentinel-2 entered TILT mode at 6s")

	// A fault on a node that strikes after the switch does not stage it.
	late := newHistory().observed(history.Failover, "sentinel-1", "redis-1 -> redis-2", ms(2000)).
		fault("kill", "redis-1", ms(3000), ms(4000))
	r = Check(turns(late).build(), Options{})
	assert.Equal(t, Unknown, r.Verdict, r.Reason)
	assert.Contains(t, kinds(r.Anomalies), KindUnstagedFailover, r.Reason)

	// Nor does a cut of one client's link to the master: Sentinel sees none.
	cut := newHistory().fault("link-cut", "client 0 -> redis-1", ms(1000), ms(4000)).
		observed(history.Failover, "sentinel-1", "redis-1 -> redis-2", ms(2000))
	r = Check(turns(cut).build(), Options{})
	assert.Equal(t, Unknown, r.Verdict, r.Reason)
	assert.Contains(t, kinds(r.Anomalies), KindUnstagedFailover, r.Reason)
}

func TestNamesNode(t *testing.T) {
	assert.True(t, namesNode("redis-2,redis-4", "redis-4"))
	assert.True(t, namesNode("redis-3 by 16s", "redis-3"))
	assert.False(t, namesNode("redis-10", "redis-1"))
	assert.False(t, namesNode("client 0 -> redis-4,redis-5", "redis-1"))
}
