package scenarios

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A knob sets its parameter in TTLs on a scenario that has it, names the
// point, expects nothing, and is refused where the parameter means
// nothing, before anything starts.
func TestKnobsSetTheirParameterInTTLs(t *testing.T) {
	pause, _ := Get("pause-simple")
	k, err := KnobNamed("pause-ttl")
	require.NoError(t, err)
	c, err := k.At(pause, 1.5)
	require.NoError(t, err)
	require.Equal(t, 1500*time.Millisecond, c.Fault.For)
	require.Equal(t, "pause-simple@pause-ttl=1.5", c.Name)
	require.Equal(t, Unknown, c.Expect)
	_, err = c.Prepare(RunOptions{Seed: 1})
	require.NoError(t, err)

	failover, _ := Get("failover-simple")
	d, err := KnobNamed("down-after-ttl")
	require.NoError(t, err)
	c, err = d.At(failover, 0.5)
	require.NoError(t, err)
	require.Equal(t, 5*time.Second, c.Cluster.DownAfter.D(), "half of its 10 s lease")
	_, err = c.Prepare(RunOptions{Seed: 1})
	require.NoError(t, err)

	_, err = d.At(pause, 1)
	require.ErrorContains(t, err, "independent topology")
	_, err = k.At(failover, 1)
	require.ErrorContains(t, err, "failover-simple's nemesis is plan")
	_, err = k.At(pause, 0)
	require.ErrorContains(t, err, "more than 0")
	_, err = KnobNamed("colour")
	require.ErrorContains(t, err, `unknown knob "colour"`)
}
