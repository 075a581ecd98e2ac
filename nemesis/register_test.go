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
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// A fault and a schedule defined outside the package, as a Go user adds
// them: one declaration each, one registration.
func init() {
	nemesis.RegisterFault(nemesis.FaultDecl{
		Name:    "debug-sleep",
		Summary: "DEBUG SLEEP on the nodes for the step's 'by': the server answers nothing meanwhile, and its connections stay open",
		Target:  "primary",
		// A Redis command alone: a deployment deadbolt did not start takes it.
		ByCommand: true,
		// Half a TTL to one TTL and a half.
		Size: func(rng *rand.Rand, ttl time.Duration) time.Duration {
			return ttl/2 + time.Duration(rng.Int64N(int64(ttl)+1))
		},
		Fault: nemesis.FaultFunc(func(ctx context.Context, env nemesis.Env, t nemesis.Target, by time.Duration) (nemesis.Heal, error) {
			for _, n := range t.Nodes {
				rdb := n.PatientClient()
				err := rdb.Do(ctx, "DEBUG", "SLEEP", fmt.Sprintf("%.3f", by.Seconds())).Err()
				rdb.Close()
				if err != nil {
					return nil, fmt.Errorf("%s: DEBUG SLEEP: %w", n.Name, err)
				}
			}
			return nil, nil
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
		Name:     "sleep-primary",
		Summary:  "DEBUG SLEEP the master for a TTL, once, after the parameters' wait",
		Topology: nemesis.OnFailover,
		New: func(p nemesis.Params) nemesis.Nemesis {
			return &nemesis.Plan{Steps: []nemesis.Step{{Fault: "debug-sleep", After: p.After, By: time.Second, For: time.Second}}}
		},
	})
}

func TestAFaultRegisteredOutsideIsListedValidatedAndDrawn(t *testing.T) {
	require.Contains(t, nemesis.Faults(), "debug-sleep")
	summary, target := nemesis.FaultSummary("debug-sleep")
	require.Contains(t, summary, "DEBUG SLEEP")
	require.Equal(t, "primary", target)

	require.NoError(t, nemesis.Step{Fault: "debug-sleep", By: time.Second}.Validate())
	require.ErrorContains(t, nemesis.Step{Fault: "debug-sleep", Target: "rack:1"}.Validate(), "bad target")
	_, err := nemesis.New("plan", nemesis.Params{Steps: []nemesis.Step{{Fault: "debug-sleep", By: time.Second}}})
	require.NoError(t, err)

	// Its target kind says where it runs; it needs no clock and no links,
	// and a deployment of the user's own takes it.
	need, err := nemesis.NeedsOf("random", nemesis.Params{Faults: []string{"debug-sleep"}})
	require.NoError(t, err)
	require.Equal(t, nemesis.Needs{Topology: nemesis.OnFailover}, need)
	nodes, err := nemesis.NodeFaults("random", nemesis.Params{Faults: []string{"debug-sleep", "kill"}})
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
	r := &nemesis.Random{P: nemesis.Params{Faults: []string{"debug-sleep", "replica-clock"}}}
	rng, ttl := rand.New(rand.NewPCG(3, 0)), time.Second
	seen := map[string]bool{}
	for range 40 {
		s := r.Draw(rng, ttl)
		seen[s.Fault] = true
		require.NoError(t, s.Validate())
		switch s.Fault {
		case "debug-sleep":
			require.Equal(t, "primary", s.Target)
			require.GreaterOrEqual(t, s.By, ttl/2)
			require.LessOrEqual(t, s.By, ttl/2+ttl)
		case "replica-clock":
			require.Equal(t, "replica", s.Target, "its declared random target")
			require.Zero(t, s.By, "no Size: no size")
		}
	}
	require.Len(t, seen, 2)
}

func TestAScheduleRegisteredOutsideIsListedAndBuilt(t *testing.T) {
	require.True(t, slices.Contains(nemesis.Names(), "sleep-primary"))
	require.Contains(t, nemesis.Summary("sleep-primary"), "DEBUG SLEEP")
	require.True(t, nemesis.Runs("sleep-primary", cluster.Sentinel))
	require.False(t, nemesis.Runs("sleep-primary", cluster.Independent))
	n, err := nemesis.New("sleep-primary", nemesis.Params{After: time.Second})
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, n.Span(time.Second))
	need, err := nemesis.NeedsOf("sleep-primary", nemesis.Params{})
	require.NoError(t, err)
	require.Equal(t, "the sentinel or cluster topology", need.TopologyWords())
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
