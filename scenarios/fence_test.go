package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/deadbolt-lab/deadbolt/checker"
)

// A fenced run counts only if a stale access met the fence: rejected, or
// taken and judged.
func TestAFencedRunMetItsFenceOnlyWithAStaleAccess(t *testing.T) {
	report := func(m map[string]int64) checker.Report {
		return checker.Report{Checks: []checker.Result{{Checker: "fencing", Applicable: true, Metrics: m}}}
	}
	assert.False(t, metFence(checker.Report{}), "no fencing check")
	assert.False(t, metFence(report(map[string]int64{"stale_writes_rejected": 0, "superseded_writes_accepted": 0})))
	assert.True(t, metFence(report(map[string]int64{"stale_writes_rejected": 1})))
	assert.True(t, metFence(report(map[string]int64{"stale_reads_rejected": 2})))
	assert.True(t, metFence(report(map[string]int64{"superseded_writes_accepted": 1})))
	assert.True(t, metFence(report(map[string]int64{"stale_writes_accepted": 1})))
}
