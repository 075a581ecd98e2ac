package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/deadbolt-lab/deadbolt/history"
)

// A lock whose command the harness's ACL refused shows it in its replies,
// even where the node's ACL LOG was lost to a restart.
func TestNopermRepliesAreCountedAndTheFirstNamed(t *testing.T) {
	ops := []history.Op{
		{Type: history.Invoke, Process: 1, F: history.Acquire, Key: "k0"},
		{Type: history.Info, Process: 1, F: history.Acquire, Key: "k0", Error: "NOPERM User deadbolt-lock has no permissions to run the 'lpush' command"},
		{Type: history.Fail, Process: 2, F: history.Acquire, Key: "k0", Error: "NOREPLICAS Not enough good replicas to write."},
		{Type: history.Fail, Process: 3, F: history.Release, Key: "k0", Error: "NOPERM this user has no permissions to access one of the keys"},
	}
	n, first := nopermReplies(ops)
	assert.Equal(t, 2, n)
	assert.Contains(t, first, "process 1's acquire: NOPERM User deadbolt-lock has no permissions to run the 'lpush' command")

	n, first = nopermReplies(ops[:3][2:])
	assert.Zero(t, n, "another refusal is not the ACL's")
	assert.Empty(t, first)
}
