package client

import (
	"fmt"
	"io"
	"time"

	"github.com/google/shlex"

	"github.com/deadbolt-lab/deadbolt/locks"
)

// ParseCommand splits a driver's command line as a shell would split its
// words (quotes and backslashes), with no shell involved.
func ParseCommand(line string) (Command, error) {
	words, err := shlex.Split(line)
	if err != nil {
		return Command{}, fmt.Errorf("driver command %q: %w", line, err)
	}
	if len(words) == 0 {
		return Command{}, fmt.Errorf("driver command is empty")
	}
	return Command{Path: words[0], Args: words[1:]}, nil
}

// Probe starts the driver, reads its hello and ends it, to learn its locks
// before any container starts. stderr receives the driver's log.
func Probe(c Command, stderr io.Writer) (locks.Declared, error) {
	p, err := Start(c, Options{Stderr: stderr})
	if err != nil {
		return locks.Declared{}, err
	}
	defer p.Close(2 * time.Second)
	h := p.Hello()
	if len(h.Locks) == 0 {
		return locks.Declared{}, fmt.Errorf("driver %s offers no lock (its hello lists none)", c)
	}
	for name := range h.LockInfo {
		found := false
		for _, l := range h.Locks {
			found = found || l == name
		}
		if !found {
			return locks.Declared{}, fmt.Errorf("driver %s declares lock_info for %q, which its hello's locks do not list", c, name)
		}
	}
	return locks.Declared{Driver: c.String(), Locks: h.Locks, Info: h.LockInfo}, nil
}
