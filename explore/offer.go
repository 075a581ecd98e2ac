package explore

import (
	"fmt"
	"slices"
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// Offer is what a lock declares it can do, read from its catalogue (the Go
// locks' registry, or a driver's hello) before anything starts: where it
// runs, the calls it offers on a held lease, whether it renews leases on
// its own, re-enters, queues, fences, and the points it stops at. The
// generator draws only what the lock offers, and aims its faults at the
// calls that decide a lease.
type Offer struct {
	Lock string
	// Places are where it runs, simplest first.
	Places []Place
	// Calls are the calls on a held lease (locks.CallExtend, CallReacquire).
	Calls []string
	// Renews: a watchdog renews the lease while it is held.
	Renews bool
	// Resends: the lock's client sends a timed-out command again, so a
	// node's stall past the call timeout decides its acquires.
	Resends   bool
	Reentrant bool
	Queues    bool
	Fencing   bool
	// Points are the named points inside the lock where a client can be
	// stopped (pause-at, crash-at).
	Points []string
	// Knobs are the settings of the lock's library the exploration runs it
	// with (nil: its defaults); every generated scenario carries them.
	Knobs map[string]string `json:"knobs,omitempty"`
	// TakesKnobs: the lock is a library's, which runs as its users run it
	// (its client's and its own defaults, and Knobs): the generator never
	// changes its options, and reads its call timeout from CallTimeout.
	TakesKnobs bool `json:"takes_knobs,omitempty"`
	// CallTimeout is how long the lock's client waits for a reply, as the
	// lock declares it (locks.Behaviour); 0: for ever, or not declared.
	CallTimeout time.Duration `json:"call_timeout,omitempty"`
	// Target: the runs go against a deployment deadbolt did not start
	// (--target), which takes faults on clients and their links only, and
	// whose keys the runs must not share: each run locks keys of its own.
	Target bool `json:"target,omitempty"`
}

// Place is a topology the lock runs on: independent masters (Masters of
// them), one Sentinel group, or one Redis Cluster.
type Place struct {
	Topology string
	Masters  int
}

// String names the place as a scenario's description does.
func (p Place) String() string {
	if p.Topology == cluster.Independent {
		return fmt.Sprintf("%d independent master(s)", p.Masters)
	}
	return p.Topology
}

// Spec is the place as a cluster spec: the topology's defaults but for the
// masters.
func (p Place) Spec() cluster.Spec {
	return cluster.Spec{Topology: p.Topology, Masters: p.Masters}
}

// masterCounts are the independent master counts tried, fewest first: one
// master, then the quorum shapes of RedLock.
var masterCounts = []int{1, 3, 5}

// OfferOf reads lock's declaration from c. A lock that runs nowhere
// deadbolt can start is an error.
func OfferOf(c locks.Catalogue, lock string) (Offer, error) {
	if err := c.Lookup(lock); err != nil {
		return Offer{}, err
	}
	b := c.Behaviour(lock)
	o := Offer{Lock: lock, Calls: slices.Clone(c.Calls(lock)), Renews: c.Renews(lock), Resends: c.Resends(lock), Reentrant: c.Reentrant(lock),
		Queues: c.Queues(lock), Fencing: c.Fencing(lock), Points: slices.Clone(c.Points(lock)),
		TakesKnobs: len(c.Knobs(lock)) > 0, CallTimeout: b.CallTimeout()}
	if c.RunsOn(lock, cluster.Independent) == nil {
		for _, n := range masterCounts {
			if c.Fits(lock, n) == nil {
				o.Places = append(o.Places, Place{Topology: cluster.Independent, Masters: n})
			}
		}
	}
	for _, t := range []string{cluster.Sentinel, cluster.RedisCluster} {
		if c.RunsOn(lock, t) == nil && c.Fits(lock, 1) == nil {
			o.Places = append(o.Places, Place{Topology: t})
		}
	}
	if len(o.Places) == 0 {
		return o, fmt.Errorf("lock %s runs on none of deadbolt's topologies (independent masters, Sentinel, Redis Cluster)", lock)
	}
	return o, nil
}

// Offers reports whether the lock offers call on a held lease.
func (o Offer) Offers(call string) bool { return slices.Contains(o.Calls, call) }
