package scenarios

import (
	"fmt"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// Replies delayed past the TTL: client 0's requests reach the masters at
// once, but every reply comes back 400 ms later, after its 300 ms lease has
// expired there. The other client may take the lock in between, and a
// client that uses the late lease works beside it. RedLock (ours, and
// redsync) bounds each node's call at TTL/20, so a late reply counts as no
// reply and the lease is refused before it could be late; a single-instance
// lock that waits for its OK hands back a lease that already ran out.
func init() {
	delayed := func(s Scenario, masters int) Scenario {
		s.Cluster = cluster.Spec{Topology: cluster.Independent, Masters: masters, LinkFaults: true}
		var nodes []string
		for i := 1; i <= masters; i++ {
			nodes = append(nodes, fmt.Sprintf("redis-%d", i))
		}
		// Calls may take two late round trips (a new connection's HELLO,
		// then SET): bound them at 2 s, not the default, so a late OK
		// arrives instead of a timeout.
		s.LockOptions = client.LockOptions{TimeoutMS: 2000}
		s.Workload, s.Nemesis = "counter", "plan"
		s.Fault = nemesis.Params{Steps: []nemesis.Step{
			{Fault: "link-delay", Target: "link:0:" + strings.Join(nodes, ","), By: 400 * time.Millisecond},
		}}
		// Two clients, holds that outlast the 100 ms between expiry and the
		// late OK, and gaps that leave A a free key now and then.
		s.Precondition = "every reply to client A is late from its first request on"
		s.Clients, s.Keys = 2, []string{"k0"}
		s.TTL, s.HoldMin, s.HoldMax, s.Pause = 300*time.Millisecond, 150*time.Millisecond, 250*time.Millisecond, 100*time.Millisecond
		s.Time = 10 * time.Second
		return s
	}
	// RedLock's story needs no long holds: A never gets a late lease. Short
	// ones leave a client 220 ms of its 300 ms lease to spare, so that a
	// machine stall cannot make it write after its lease ran out (with
	// holds of 150-250 ms, one did under the stress suite, seed 2: a lost
	// update with no double hold, invalid).
	careful := func(s Scenario) Scenario {
		s.HoldMin, s.HoldMax = 30*time.Millisecond, 80*time.Millisecond
		return s
	}
	// Late replies test a lock only when A asks for a free key: so that
	// this is not left to how B's holds fall, k0 is A's alone from the
	// delay's strike until A's first acquire has ended (bsm: until A is
	// granted it), and B asks for it at once.
	late := func(s Scenario) Scenario {
		st := &s.Fault.Steps[0]
		st.WaitKey, st.WaitSlot, st.Under, st.Asked = "k0", 0, true, s.Expect == Safe
		s.Precondition = "every reply to client A is late from its first request on, and A asks for k0 under the delay " +
			"while nobody else holds it"
		if s.Expect == Unsafe {
			s.Precondition += ", and is granted it"
		}
		return s
	}
	register(late(careful(delayed(Scenario{
		Name: "delay-redlock",
		Description: "RedLock on five masters; every reply to client A comes 400 ms late, after its 300 ms lease expired: " +
			"each node's call is bounded at TTL/20, so late replies count as refusals and A never gets a lease that ran out",
		Expect: Safe, Lock: "redlock", CI: true,
	}, 5))))
	register(late(careful(delayed(Scenario{
		Name: "delay-redsync",
		Description: "the same late replies with go-redsync/redsync v4 on five masters: its per-node timeout (TTL x 0.05) " +
			"turns them into errors, and A's acquires end unknown rather than late",
		Expect: Safe, Lock: "redsync", CI: true,
	}, 5))))
	register(late(delayed(Scenario{
		Name: "delay-bsm",
		Description: "the same late replies with bsm/redislock on one master: it hands back a lease whose TTL ran out " +
			"before its OK arrived, and A works beside the client that took the expired key",
		Expect: Unsafe, Lock: "bsm", CI: true,
	}, 1)))
}
