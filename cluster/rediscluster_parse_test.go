package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// CLUSTER NODES as redis-1 printed it after the cut healed: itself demoted,
// its replica promoted, a migrating slot, and a peer it had not named yet.
const nodesText = `40f8a76a0970be0d391ed25bae967fdf8912177a 10.149.167.14:6379@16379,redis-4 master - 0 1795607552616 7 connected 0-5460
fb5f7c74a7763fc232d3461c354604140675843d 10.149.167.11:6379@16379,redis-1 myself,slave 40f8a76a0970be0d391ed25bae967fdf8912177a 0 1795607552000 7 connected
d7f7c12ef9ba491b4d330cd31dc2dbd8627fbdb0 10.149.167.12:6379@16379,redis-2 master,fail? - 1795607548483 1795607547475 2 connected 5461-10921 [10922->-08db6018d26abaef11e4ce318e0df7ff40283aec]
08db6018d26abaef11e4ce318e0df7ff40283aec 10.149.167.13:6379@16379,redis-3 master - 0 1795607552000 3 connected 10922-16383
e2fc8955d84d38c40fd97ed2e55889e6e639503a 10.149.167.15:6379@16379 slave d7f7c12ef9ba491b4d330cd31dc2dbd8627fbdb0 0 1795607552315 5 connected
`

func TestClusterNodesAreReadByName(t *testing.T) {
	v, err := parseClusterNodes(nodesText)
	require.NoError(t, err)
	require.Contains(t, v.nodes["redis-1"].flags, "myself")
	require.Len(t, v.nodes, 5)
	require.Equal(t, "redis-4", v.nodes["redis-1"].master, "a replica names its master by name")
	require.True(t, v.nodes["redis-4"].isMaster())
	require.False(t, v.nodes["redis-1"].isMaster())
	require.Equal(t, "7", v.nodes["redis-4"].epoch)
	require.Equal(t, "redis-2", v.nodes["10.149.167.15:6379@16379"].master, "a node without a hostname yet keeps its address")

	require.Equal(t, "redis-4", v.owner(449))
	require.Equal(t, "redis-2", v.owner(10921))
	require.Equal(t, "redis-3", v.owner(10922), "a migrating slot stays its owner's until SETSLOT NODE")
	require.Equal(t, "redis-3", v.owner(16383))

	_, err = parseClusterNodes("garbage line\n")
	require.ErrorContains(t, err, "bad CLUSTER NODES line")
}
