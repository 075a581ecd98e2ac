package drivers

import "testing"

// A major's adapter gets the build tags of the calls that changed within
// it from the version they changed on.
func TestTagsForAVersionWithinAMajor(t *testing.T) {
	m := GoModule{Tags: "base", Since: []VersionTags{{Version: "v1.4.0", Tags: "redsync1_errors"}}}
	if got := m.tagsFor("v1.3.0"); got != "base" {
		t.Errorf("v1.3.0: %q", got)
	}
	if got := m.tagsFor("v1.4.2"); got != "base,redsync1_errors" {
		t.Errorf("v1.4.2: %q", got)
	}
	if got := (GoModule{Since: m.Since}).tagsFor("v1.4.0"); got != "redsync1_errors" {
		t.Errorf("no base tags: %q", got)
	}
}
