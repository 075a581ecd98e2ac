package client

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/deadbolt-lab/deadbolt/locks"
)

// Library is a third-party lock library a driver of drivers/go/ serves.
type Library struct {
	// Name is the lock's name before the @; Module the library's module
	// path, whose version the binary was built with names the lock.
	Name, Module, Summary string
	New                   locks.Factory
	// TLS: every connection the library makes goes through the
	// endpoints' Dialer, which speaks TLS; false for a library that dials
	// by itself, which a TLS run then refuses before anything starts.
	TLS bool
	// Knobs are the library's settings a user may set, with the library's
	// defaults (locks.Knob); the factory reads them from Options.Settings.
	Knobs locks.Knobs
}

// ServeLibrary is the main of a driver built for one third-party lock
// library at one version (drivers/go/): it registers the library's lock
// as NAME@VERSION, with the version the binary's own build info gives
// for its module, so that a build that resolved another version than the
// one asked for says so in its hello, and serves it alone, on stdin and
// stdout, as Serve does. It returns the exit code.
func ServeLibrary(l Library) int {
	version, err := moduleVersion(l.Module)
	if err != nil {
		fmt.Fprintf(os.Stderr, "driver %s: %v\n", l.Name, err)
		return 2
	}
	lock := l.Name + "@" + version
	locks.Register(lock, l.Summary, l.New)
	if len(l.Knobs) > 0 {
		locks.RegisterKnobs(lock, l.Knobs)
	}
	d := locks.Declare(lock)
	d.Library, d.Version, d.TLS = l.Module, version, l.TLS
	return serve(os.Stdin, os.Stdout, os.Stderr, "go "+lock, map[string]locks.Declaration{lock: d})
}

// ModuleVersion is the version of module this binary was built with, ""
// when it was built without it: for a driver whose library's defaults
// changed between versions.
func ModuleVersion(module string) string {
	v, _ := moduleVersion(module)
	return v
}

// moduleVersion is the version of module this binary was built with.
func moduleVersion(module string) (string, error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", fmt.Errorf("no build info in this binary: build it with module support")
	}
	for _, m := range bi.Deps {
		if m.Path != module {
			continue
		}
		if m.Replace != nil && m.Replace.Version != "" {
			return m.Replace.Version, nil
		}
		return m.Version, nil
	}
	return "", fmt.Errorf("this binary was not built with module %s", module)
}
