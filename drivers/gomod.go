package drivers

import (
	"fmt"
	"os"
	"slices"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// FromGoMod reads a Go module's go.mod and names the lock libraries it
// requires as NAME@VERSION, at the versions it requires (a replace of a
// library by another version of it counts, as Go applies it: one that
// names a version replaces that version only; a replace by a directory or
// another module is refused: there is no version of the library to build). A go.mod that requires none of
// deadbolt's libraries is an error that names them.
func FromGoMod(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := modfile.Parse(path, b, nil)
	if err != nil {
		return nil, err
	}
	replaced := map[string]*modfile.Replace{}
	for _, r := range f.Replace {
		replaced[r.Old.Path] = r
	}
	var out []string
	for _, req := range f.Require {
		lib, ok := libraryOfModule(req.Mod.Path)
		if !ok {
			continue
		}
		version := req.Mod.Version
		if r, ok := replaced[req.Mod.Path]; ok && (r.Old.Version == "" || r.Old.Version == version) {
			if r.New.Version == "" || r.New.Path != req.Mod.Path {
				return nil, fmt.Errorf("%s: %s is replaced by %s %s, which is no version of %s that deadbolt can build", path, req.Mod.Path, r.New.Path, r.New.Version, lib)
			}
			version = r.New.Version
		}
		if !semver.IsValid(version) {
			return nil, fmt.Errorf("%s: %s requires %s at %q, no semantic version", path, req.Mod.Path, lib, version)
		}
		out = append(out, lib+"@"+version)
	}
	if len(out) == 0 {
		var mods []string
		for _, n := range LibraryNames() {
			for _, m := range libraries[n].Go {
				mods = append(mods, m.Module)
			}
		}
		return nil, fmt.Errorf("%s requires none of the lock libraries deadbolt builds (%v)", path, mods)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// libraryOfModule is the library whose Go module path is path.
func libraryOfModule(path string) (string, bool) {
	for _, n := range LibraryNames() {
		for _, m := range libraries[n].Go {
			if m.Module == path {
				return n, true
			}
		}
	}
	return "", false
}
