package drivers

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/internal/suggest"
)

// Library is a third-party lock library that deadbolt runs at a version
// the user names, as a lock called NAME@VERSION (--lock redsync@v4.0.3):
// a driver for that version is built (a Go library: its adapter module
// with its go.mod pinning the version) or set up (a Python one) on first
// use, cached, and run as any driver is. The driver's hello says which
// version it runs, as its own build or import reports it, and a run
// refuses a driver that runs another than the one asked for.
type Library struct {
	// Name is the lock's name before the @.
	Name    string
	Summary string
	// Upstream is where the library's bugs are recorded.
	Upstream string
	// Known are versions known to build and run here: `deadbolt locks`
	// lists them. Any other version the module proxy (or Debian) serves
	// may be asked for.
	Known []string
	// Go are the library's Go modules, one per major version with a
	// module path of its own; nil for a library in another language.
	Go []GoModule
	// Setup makes the driver for a version of a library in another
	// language: its command, or an error saying why not (bad input).
	Setup func(version string) (client.Command, error)
}

// GoModule is one module path of a Go library and its adapter.
type GoModule struct {
	// Module is the library's module path; Major the major version it
	// serves ("v1" serves v0 and v1, "v4" serves v4).
	Module string
	Major  string
	// Adapter is the adapter module's directory, relative to the
	// repository root: a main that serves the library's lock through
	// client.ServeLibrary, with a go.mod that pins the library.
	Adapter string
	// Tags are build tags for the adapter: one adapter may serve two
	// major versions, each with a file of the calls that differ.
	Tags string
	// Since adds build tags from a version of the major on, for calls
	// whose signatures changed within it (redsync v1.4.0's Unlock and
	// Extend return an error beside the bool).
	Since []VersionTags
	// Until adds build tags for the versions before one, for an adapter
	// of the module (built untagged at deadbolt's own version, the newest)
	// whose older versions lack what it uses.
	Until []VersionTags
}

// VersionTags are build tags for the versions from Version on.
type VersionTags struct{ Version, Tags string }

// tagsFor are the build tags of the adapter for version.
func (m GoModule) tagsFor(version string) string {
	tags := m.Tags
	for _, s := range m.Since {
		if semver.Compare(version, s.Version) >= 0 {
			tags = strings.TrimPrefix(tags+","+s.Tags, ",")
		}
	}
	for _, u := range m.Until {
		if semver.Compare(version, u.Version) < 0 {
			tags = strings.TrimPrefix(tags+","+u.Tags, ",")
		}
	}
	return tags
}

var libraries = map[string]Library{}

// RegisterLibrary adds a library; a duplicate name panics.
func RegisterLibrary(l Library) {
	if _, dup := libraries[l.Name]; dup {
		panic("drivers: duplicate library " + l.Name)
	}
	libraries[l.Name] = l
}

// LibraryNames lists the libraries, sorted.
func LibraryNames() []string { return slices.Sorted(maps.Keys(libraries)) }

// GetLibrary returns the named library.
func GetLibrary(name string) (Library, error) {
	l, ok := libraries[name]
	if !ok {
		return Library{}, fmt.Errorf("unknown library %q (known: %s)%s", name, strings.Join(LibraryNames(), ", "), suggest.Hint(name, LibraryNames()))
	}
	return l, nil
}

// IsVersioned reports whether lock names a library at a version
// (NAME@VERSION).
func IsVersioned(lock string) bool { return strings.Contains(lock, "@") }

// SplitVersioned reads NAME@VERSION.
func SplitVersioned(lock string) (Library, string, error) {
	name, version, ok := strings.Cut(lock, "@")
	if !ok || name == "" || version == "" {
		return Library{}, "", fmt.Errorf("lock %q: a library at a version is NAME@VERSION (e.g. redsync@v4.0.3)", lock)
	}
	l, err := GetLibrary(name)
	if err != nil {
		return l, "", fmt.Errorf("lock %q: %w", lock, err)
	}
	return l, version, nil
}

// goModule is the module of l that serves version.
func (l Library) goModule(version string) (GoModule, error) {
	if !semver.IsValid(version) || semver.Build(version) != "" {
		return GoModule{}, fmt.Errorf("%s@%s: a Go module's version is a semantic version such as v1.2.3", l.Name, version)
	}
	major := semver.Major(version)
	if major == "v0" {
		major = "v1"
	}
	var have []string
	for _, m := range l.Go {
		if m.Major == major {
			return m, nil
		}
		have = append(have, m.Major)
	}
	return GoModule{}, fmt.Errorf("%s@%s: deadbolt has no adapter for %s's %s (it has %s)", l.Name, version, l.Name, major, strings.Join(have, ", "))
}
