package nemesistest

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// Client is a new connection to n, a node of a fake cluster (a Redis node
// or its Sentinel), for a test to read and write it with; the caller
// closes it. A nemesis.Node offers no Redis client, so that a fault needs
// none: this is the test's way in.
func Client(t testing.TB, n nemesis.Node) *redis.Client {
	t.Helper()
	switch n := n.(type) {
	case *Node:
		return n.Client()
	case sentinelNode:
		return n.Client()
	}
	t.Fatalf("%s is no node of a fake cluster", n.Name())
	return nil
}
