package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/internal/suggest"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// Knobs are the parameters that decide a failure's damage, for sweeping
// the unsafe window (deadbolt sweep): each sets one value, a multiple of
// the scenario's TTL, on a scenario that has the parameter.
var Knobs = []Knob{
	{
		Name: "pause-ttl", What: "the client pause's length, in TTLs",
		Apply: func(s Scenario, v float64) (Scenario, error) {
			if !pausesClients(s) {
				return s, fmt.Errorf("knob pause-ttl sets a client pause's length; scenario %s's nemesis is %s", s.Name, s.Nemesis)
			}
			s.Fault.For = scaled(s.TTL.D(), v)
			return s, nil
		},
	},
	{
		Name: "down-after-ttl", What: "how long Sentinel (or the cluster) waits before it judges the master down, in TTLs",
		Apply: func(s Scenario, v float64) (Scenario, error) {
			if s.Cluster.Topology != cluster.Sentinel && s.Cluster.Topology != cluster.RedisCluster {
				return s, fmt.Errorf("knob down-after-ttl sets Sentinel's or the cluster's down-after; scenario %s runs the %s topology", s.Name, s.Cluster.Topology)
			}
			s.Cluster.DownAfter = Duration(scaled(s.TTL.D(), v))
			return s, nil
		},
	},
}

// pausesClients reports a schedule of one fault, tuned by the scenario's
// parameters (a preset, not a plan's steps), whose faults stop client
// processes, as their declarations say.
func pausesClients(s Scenario) bool {
	if len(s.Fault.Steps) > 0 {
		return false
	}
	fs, err := nemesis.FaultsOf(s.Nemesis, s.Fault)
	if err != nil || len(fs) == 0 {
		return false
	}
	for _, f := range fs {
		d, err := nemesis.FaultOf(f)
		if err != nil || !d.Effects.OnClients || !d.Effects.Stops {
			return false
		}
	}
	return true
}

// Knob is one sweepable parameter.
type Knob struct {
	Name, What string
	Apply      func(s Scenario, v float64) (Scenario, error)
}

// KnobNamed finds a knob.
func KnobNamed(name string) (Knob, error) {
	i := slices.IndexFunc(Knobs, func(k Knob) bool { return k.Name == name })
	if i < 0 {
		var names []string
		for _, k := range Knobs {
			names = append(names, k.Name)
		}
		return Knob{}, fmt.Errorf("unknown knob %q (known: %s)%s", name, strings.Join(names, ", "), suggest.Hint(name, names))
	}
	return Knobs[i], nil
}

// At is the scenario with the knob at v, named for it (pause-simple@pause-ttl=1.5)
// and expecting nothing: a sweep measures, it does not judge.
func (k Knob) At(s Scenario, v float64) (Scenario, error) {
	if v <= 0 {
		return s, fmt.Errorf("knob %s: values must be more than 0, got %g", k.Name, v)
	}
	c, err := k.Apply(s, v)
	if err != nil {
		return c, err
	}
	c.Name = fmt.Sprintf("%s@%s=%g", s.Name, k.Name, v)
	c.Expect, c.CI = Unknown, false
	return c, nil
}

func scaled(d time.Duration, v float64) time.Duration {
	return time.Duration(float64(d) * v).Round(time.Millisecond)
}
