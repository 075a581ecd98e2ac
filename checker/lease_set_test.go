package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A lease set holds the harness's names as bits and others by name, each
// read as the reading reads it or from the string; emptied, it holds
// none, and takes leases again.
func TestLeaseSetHoldsLeasesUntilEmptied(t *testing.T) {
	s := newLeaseSet()
	in := []string{"p1.1", "p1.200", "p7.3", "lease-of-a-user", "p01.2"}
	for _, l := range in[:4] {
		s.add(nameOf(l), l)
	}
	s.add(leaseName{}, in[4]) // not read yet: read from the string
	for _, l := range in {
		assert.True(t, s.has(leaseName{}, l), l)
		assert.True(t, s.has(nameOf(l), l), l)
	}
	for _, l := range []string{"p1.2", "p2.1", "p7.4", "lease-of-another", "p1.01"} {
		assert.False(t, s.has(nameOf(l), l), l)
	}
	s.empty()
	for _, l := range in {
		assert.False(t, s.has(nameOf(l), l), "%s after empty", l)
	}
	s.add(leaseName{}, "p7.3")
	assert.True(t, s.has(nameOf("p7.3"), "p7.3"))
	assert.False(t, s.has(nameOf("p1.1"), "p1.1"))
}
