package drivers

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/mod/semver"
)

// VersionsBetween are the versions of the library from lo to hi, both
// included: those the module proxy lists for the module of each major
// version in the range, and those the library is known to build
// (Known), which a proxy that lists only some of what it serves leaves
// out. A library in another language has only its known versions.
func (l Library) VersionsBetween(ctx context.Context, lo, hi string) ([]string, error) {
	if !semver.IsValid(lo) || !semver.IsValid(hi) || semver.Compare(lo, hi) > 0 {
		return nil, fmt.Errorf("%s versions %s..%s: want two semantic versions, the older first (v4.0.0..v4.4.1)", l.Name, lo, hi)
	}
	in := func(v string) bool {
		return semver.IsValid(v) && semver.Compare(v, lo) >= 0 && semver.Compare(v, hi) <= 0
	}
	var out []string
	for _, v := range l.Known {
		if in(v) {
			out = append(out, v)
		}
	}
	for _, m := range l.Go {
		if !majorIn(m.Major, lo, hi) {
			continue
		}
		listed, err := proxyVersions(ctx, m.Module)
		if err != nil {
			return nil, err
		}
		for _, v := range listed {
			if in(v) {
				out = append(out, v)
			}
		}
	}
	slices.SortFunc(out, semver.Compare)
	return slices.Compact(out), nil
}

// majorIn reports whether a module's major version ("v1" also serving v0)
// has versions between lo and hi.
func majorIn(major, lo, hi string) bool {
	low, high := semver.Major(lo), semver.Major(hi)
	if low == "v0" {
		low = "v1"
	}
	if high == "v0" {
		high = "v1"
	}
	return semver.Compare(major, low) >= 0 && semver.Compare(major, high) <= 0
}

// proxyVersions are the versions the module proxy lists for module.
func proxyVersions(ctx context.Context, module string) ([]string, error) {
	dir, err := os.MkdirTemp("", "deadbolt-versions-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out, err := goCommand(ctx, dir, "list", "-m", "-versions", module)
	if err != nil {
		return nil, fmt.Errorf("listing %s's versions: %s", module, buildMessage(out, err))
	}
	fields := strings.Fields(string(out))
	if len(fields) == 0 {
		return nil, nil
	}
	return fields[1:], nil
}
