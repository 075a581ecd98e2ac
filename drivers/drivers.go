// Package drivers names the lock drivers shipped in this directory, each a
// program in another language speaking docs/driver-protocol.md, so that a
// scenario can run its clients with one by name (scenarios.Scenario.Driver).
// The programs live beside this file (drivers/<name>/); a driver is one
// registration in a file of its own.
package drivers

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deadbolt-lab/deadbolt/client"
)

// Driver is a shipped driver: Script run by Interpreter.
type Driver struct {
	Name    string
	Summary string
	// Interpreter is an absolute path: the one whose libraries the
	// driver needs (a PATH lookup could find another).
	Interpreter string
	// Script is the driver's program, relative to the repository root.
	Script string
	// Needs says what the driver needs installed, for the message when it
	// cannot start.
	Needs string
}

var registry = map[string]Driver{}

// Register adds a driver; a duplicate name panics.
func Register(d Driver) {
	if _, dup := registry[d.Name]; dup {
		panic("drivers: duplicate " + d.Name)
	}
	registry[d.Name] = d
}

// Names lists the shipped drivers, sorted.
func Names() []string { return slices.Sorted(maps.Keys(registry)) }

// Get returns the named driver.
func Get(name string) (Driver, error) {
	d, ok := registry[name]
	if !ok {
		return Driver{}, fmt.Errorf("unknown driver %q (shipped: %s)", name, strings.Join(Names(), ", "))
	}
	return d, nil
}

// Command is the command line that runs the driver. Its script is looked
// for in the working directory and the directories above it, then above
// the deadbolt binary (bin/deadbolt of a checkout), so that deadbolt finds
// it when run anywhere in the repository, as `make scenario` runs it;
// outside any checkout, in the source the binary carries (source.go).
func (d Driver) Command() (client.Command, error) {
	path, err := findShipped(d.Script)
	if err != nil {
		return client.Command{}, fmt.Errorf("driver %s: %w", d.Name, err)
	}
	return d.command(path), nil
}

func (d Driver) command(script string) client.Command {
	return client.Command{Path: d.Interpreter, Args: []string{script}}
}

// findUp looks for rel in dir and each directory above it.
func findUp(dir, rel string) (string, bool) {
	for {
		path := filepath.Join(dir, rel)
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
			return path, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
