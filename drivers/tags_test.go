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

// An adapter built at deadbolt's own (newest) version without tags gets
// the tags of the older versions that lack what it uses.
func TestTagsUntilAVersion(t *testing.T) {
	m := GoModule{Until: []VersionTags{{Version: "v4.5.0", Tags: "old_a"}, {Version: "v4.8.1", Tags: "old_b"}}}
	for v, want := range map[string]string{"v4.0.3": "old_a,old_b", "v4.5.0": "old_b", "v4.8.0": "old_b", "v4.8.1": "", "v4.18.1": ""} {
		if got := m.tagsFor(v); got != want {
			t.Errorf("%s: %q, want %q", v, got, want)
		}
	}
}
