package nemesis_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/nemesis/nemesistest"
)

// A fault and a schedule defined outside the package, as a Go user adds
// them: one declaration each, one registration.
func init() {
	nemesis.RegisterFault(nemesis.FaultDecl{
		Name:    "pause-writes",
		Summary: "CLIENT PAUSE WRITE on the nodes for at most the step's 'by': reads go on, writes wait; the heal unpauses",
		Target:  "minority",
		// A Redis command alone: a deployment deadbolt did not start takes it.
		ByCommand: true,
		// Half a TTL to one TTL and a half.
		Size: func(rng *rand.Rand, ttl time.Duration) time.Duration {
			return ttl/2 + time.Duration(rng.Int64N(int64(ttl)+1))
		},
		Fault: nemesis.FaultFunc(func(ctx context.Context, env nemesis.Env, t nemesis.Target, by time.Duration) (nemesis.Heal, error) {
			each := func(ctx context.Context, args ...any) error {
				for _, n := range t.Nodes {
					if _, err := n.Do(ctx, args...); err != nil {
						return fmt.Errorf("%s: %v: %w", n.Name(), args, err)
					}
				}
				return nil
			}
			heal := func(ctx context.Context) error { return each(ctx, "CLIENT", "UNPAUSE") }
			return heal, each(ctx, "CLIENT", "PAUSE", by.Milliseconds(), "WRITE")
		}),
	})
	nemesis.RegisterFault(nemesis.FaultDecl{
		Name:         "replica-clock",
		Summary:      "move a replica's wall clock by the step's 'by'; the heal sets it back",
		Target:       "replica",
		RandomTarget: "replica",
		Needs:        nemesis.Needs{ClockFaults: true},
		SignedBy:     true,
		Fault: nemesis.FaultFunc(func(ctx context.Context, env nemesis.Env, t nemesis.Target, by time.Duration) (nemesis.Heal, error) {
			heal := func(ctx context.Context) error { return t.Nodes[0].SetClock(ctx, 0) }
			return heal, t.Nodes[0].SetClock(ctx, by)
		}),
	})
	nemesis.RegisterSchedule(nemesis.ScheduleDecl{
		Name:     "pause-primary-writes",
		Summary:  "pause the master's writes for a second, once, after the parameters' wait",
		Topology: nemesis.OnFailover,
		New: func(p nemesis.Params) nemesis.Nemesis {
			return &nemesis.Plan{Steps: []nemesis.Step{{Fault: "pause-writes", Target: "primary", After: p.After, By: time.Second, For: time.Second}}}
		},
	})
}

func TestAFaultRegisteredOutsideIsListedValidatedAndDrawn(t *testing.T) {
	require.Contains(t, nemesis.Faults(), "pause-writes")
	summary, target := nemesis.FaultSummary("pause-writes")
	require.Contains(t, summary, "CLIENT PAUSE WRITE")
	require.Equal(t, "minority", target)

	require.NoError(t, nemesis.Step{Fault: "pause-writes", By: time.Second}.Validate())
	require.ErrorContains(t, nemesis.Step{Fault: "pause-writes", Target: "rack:1"}.Validate(), "bad target")
	_, err := nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{{Fault: "pause-writes", By: time.Second}}})
	require.NoError(t, err)

	// It runs on any topology, needs no clock and no links, and a
	// deployment of the user's own takes it; on the primary it needs a
	// topology that has one.
	need, err := nemesis.NeedsOf("random", nemesis.Params{Faults: []string{"pause-writes"}})
	require.NoError(t, err)
	require.Equal(t, nemesis.Needs{}, need)
	need, err = nemesis.NeedsOf("plan", nemesis.Params{Steps: []nemesis.Step{{Fault: "pause-writes", Target: "primary"}}})
	require.NoError(t, err)
	require.Equal(t, nemesis.Needs{Topology: nemesis.OnFailover}, need)
	nodes, err := nemesis.NodeFaults("random", nemesis.Params{Faults: []string{"pause-writes", "kill"}})
	require.NoError(t, err)
	require.Equal(t, []string{"kill on minority"}, nodes, "a Redis command is not a node fault")

	// What it declares it needs is what NeedsOf reads, by the declaration
	// alone.
	need, err = nemesis.NeedsOf("plan", nemesis.Params{Steps: []nemesis.Step{{Fault: "replica-clock", By: -time.Second}}})
	require.NoError(t, err)
	require.Equal(t, nemesis.Needs{Topology: nemesis.OnFailover, ClockFaults: true}, need)
	d, err := nemesis.FaultOf("replica-clock")
	require.NoError(t, err)
	require.True(t, d.SignedBy)

	// The random schedule draws it on its target, sized as it declares.
	r := &nemesis.Random{P: nemesis.Params{Faults: []string{"pause-writes", "replica-clock"}}}
	rng, ttl := rand.New(rand.NewPCG(3, 0)), time.Second
	seen := map[string]bool{}
	for range 40 {
		s := r.Draw(rng, ttl)
		seen[s.Fault] = true
		require.NoError(t, s.Validate())
		switch s.Fault {
		case "pause-writes":
			require.Equal(t, "minority", s.Target)
			require.GreaterOrEqual(t, s.By, ttl/2)
			require.LessOrEqual(t, s.By, ttl/2+ttl)
		case "replica-clock":
			require.Equal(t, "replica", s.Target, "its declared random target")
			require.Zero(t, s.By, "no Size: no size")
		}
	}
	require.Len(t, seen, 2)
}

// The fault from outside strikes a node and heals as the built-in ones
// do: a window in the history, opened and closed ok, the node healthy
// after. replica-clock, since miniredis has no CLIENT PAUSE for
// pause-writes; the heal sets the clock back, so a second jump of the
// same size moves it again.
func TestAFaultRegisteredOutsideStrikesAndHeals(t *testing.T) {
	c := nemesistest.StartWith(t, nemesistest.Options{Replicas: 1, ClockFaults: true})
	rec := history.NewRecorder(nil)
	n, err := nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{{Fault: "replica-clock", Target: "replica", By: time.Minute, For: 100 * time.Millisecond}}})
	require.NoError(t, err)
	env := nemesis.Env{Cluster: c, Rec: rec, Rng: rand.New(rand.NewPCG(1, 0)), TTL: time.Second, HealthTimeout: 10 * time.Second}
	require.NoError(t, n.Run(context.Background(), env))
	done := map[history.F]history.Type{}
	for _, op := range rec.Ops() {
		if op.Fault == "replica-clock" && op.Type != history.Invoke {
			done[op.F] = op.Type
			if op.F == history.FaultStart {
				require.Equal(t, "redis-2 by 1m0s", op.Node, "the replica")
			}
		}
	}
	require.Equal(t, map[history.F]history.Type{history.FaultStart: history.OK, history.FaultEnd: history.OK, history.HealthAfter: history.OK}, done,
		"struck, healed, and the node healthy after")
	// Set back by the heal: a jump to one minute from true time moves the
	// clock again, and a key's two minutes to live become one.
	ctx := context.Background()
	master, err := c.Master(ctx)
	require.NoError(t, err)
	mc := nemesistest.Client(t, master)
	defer mc.Close()
	require.NoError(t, mc.Set(ctx, "after-heal", 1, 2*time.Minute).Err())
	require.NoError(t, c.Sync())
	replica, err := c.Node("redis-2")
	require.NoError(t, err)
	rdb := nemesistest.Client(t, replica)
	defer rdb.Close()
	require.NoError(t, replica.SetClock(ctx, time.Minute))
	require.LessOrEqual(t, rdb.TTL(ctx, "after-heal").Val(), time.Minute+time.Second)
}

func TestAScheduleRegisteredOutsideIsListedAndBuilt(t *testing.T) {
	require.True(t, slices.Contains(nemesis.Names(), "pause-primary-writes"))
	require.Contains(t, nemesis.Summary("pause-primary-writes"), "pause the master's writes")
	require.True(t, nemesis.Runs("pause-primary-writes", cluster.Sentinel))
	require.False(t, nemesis.Runs("pause-primary-writes", cluster.Independent))
	n, err := nemesis.New("pause-primary-writes", nemesis.Params{After: time.Second})
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, n.Span(time.Second))
	need, err := nemesis.NeedsOf("pause-primary-writes", nemesis.Params{})
	require.NoError(t, err)
	require.Equal(t, "the sentinel or cluster topology", need.TopologyWords())
	faults, err := nemesis.FaultsOf("pause-primary-writes", nemesis.Params{})
	require.NoError(t, err)
	require.Equal(t, []string{"pause-writes"}, faults)
}

// A declaration no run could use is refused at its registration.
func TestRegisterFaultRefusesWhatNoRunCouldUse(t *testing.T) {
	f := nemesis.FaultFunc(func(context.Context, nemesis.Env, nemesis.Target, time.Duration) (nemesis.Heal, error) {
		return nil, nil
	})
	for name, d := range map[string]nemesis.FaultDecl{
		"duplicate":     {Name: "kill", Summary: "again", Target: "minority", Fault: f},
		"bad target":    {Name: "x1", Summary: "x", Target: "rack:2", Fault: f},
		"bad topology":  {Name: "x2", Summary: "x", Target: "minority", Needs: nemesis.Needs{Topology: "mesh"}, Fault: f},
		"no fault":      {Name: "x3", Summary: "x", Target: "minority"},
		"random target": {Name: "x4", Summary: "x", Target: "minority", RandomTarget: "somewhere", Fault: f},
	} {
		require.Panics(t, func() { nemesis.RegisterFault(d) }, name)
	}
	require.Panics(t, func() {
		nemesis.RegisterSchedule(nemesis.ScheduleDecl{Name: "x5", Summary: "x", Topology: "mesh", New: func(nemesis.Params) nemesis.Nemesis { return nemesis.None{} }})
	})
}
