package workloads

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client"
)

func TestLockOfGivesTheMixTheLastSlots(t *testing.T) {
	newer, older, other := client.Command{Path: "new"}, client.Command{Path: "old"}, client.Command{Path: "other"}
	c := Config{Shape: Shape{Clients: 5}, Lock: "a@v2", Driver: newer, Mix: []Mixed{{Lock: "a@v1", Driver: older, Clients: 2}, {Lock: "b", Driver: other, Clients: 1}}}
	require.NoError(t, c.validateMix())
	want := []string{"a@v2", "a@v2", "a@v1", "a@v1", "b"}
	drivers := []string{"new", "new", "old", "old", "other"}
	for slot := range c.Clients {
		lock, d := c.lockOf(slot)
		require.Equal(t, want[slot], lock, "slot %d", slot)
		require.Equal(t, drivers[slot], d.Path, "slot %d", slot)
	}
}

func TestValidateMixKeepsAClientForTheLock(t *testing.T) {
	c := Config{Shape: Shape{Clients: 2}, Lock: "a", Mix: []Mixed{{Lock: "b", Clients: 2}}}
	require.ErrorContains(t, c.validateMix(), "needs at least one of its own")
	c.Mix[0].Clients = 0
	require.ErrorContains(t, c.validateMix(), "at least one client")
	c.Mix = nil
	require.NoError(t, c.validateMix())
	lock, _ := c.lockOf(1)
	require.Equal(t, "a", lock)
}
