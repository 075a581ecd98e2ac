package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMergeRanksInvalidOverUnknownOverValid(t *testing.T) {
	cases := []struct {
		in   []Verdict
		want Verdict
	}{
		{nil, Valid},
		{[]Verdict{Valid, Valid}, Valid},
		{[]Verdict{Valid, Unknown}, Unknown},
		{[]Verdict{Unknown, Valid}, Unknown},
		{[]Verdict{Valid, Invalid, Unknown}, Invalid},
		{[]Verdict{Unknown, Invalid}, Invalid},
		{[]Verdict{Invalid, Valid}, Invalid},
		// An unrecognised verdict must never pass as valid.
		{[]Verdict{Valid, ""}, Unknown},
		{[]Verdict{"bogus", Invalid}, Invalid},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Merge(c.in...), "Merge(%v)", c.in)
	}
}
