package workloads

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/workloads/moment"
)

// An admitted key takes the next acquire an admitted client starts, once:
// a client blocked on another key must not leave the aimed fault waiting
// for a key nobody draws. A slot not admitted, a key the workload does not
// lock, and a key opened again keep the drawn key.
func TestAnAdmittedKeyTakesTheNextAcquireOnce(t *testing.T) {
	r := &Runner{gates: newGates()}
	keys := []string{"k0", "k1"}
	r.Reserve("k0")
	require.Equal(t, "k1", r.gates.steered(0, "k1", keys), "reserved, not admitted: the drawn key")

	r.Admit("k0", 2)
	require.Equal(t, "k1", r.gates.steered(0, "k1", keys), "slot 0 is not admitted")
	require.Equal(t, "k0", r.gates.steered(2, "k1", keys), "the admitted slot's next acquire")
	require.Equal(t, "k1", r.gates.steered(2, "k1", keys), "once per admission")

	r.Admit("k0", moment.AnySlot)
	require.Equal(t, "k0", r.gates.steered(1, "k1", keys))
	r.Admit("k0", moment.AnySlot)
	r.Open("k0")
	require.Equal(t, "k1", r.gates.steered(1, "k1", keys), "an open key steers nobody")

	r.Admit("other", moment.AnySlot)
	require.Equal(t, "k1", r.gates.steered(1, "k1", keys), "a key the workload does not lock")
}
